import { marked } from 'marked';
import sanitizeHtml from 'sanitize-html';
import { visibleControls } from '../util/terminal-text.js';

/**
 * Markdown an agent wrote (its hidden controls shown as the rest of the page shows them: a U+202E
 * made `gnp.exe` read `exe.png`), as HTML that is safe to put in the page: marked renders it, then
 * sanitize-html keeps an allow-list of formatting tags only — no script, style, iframe, form, event
 * attribute or `javascript:` link survives, whatever the agent wrote (raw HTML included). Links open
 * outside the page and send no referrer.
 */
export function renderMarkdown(text: string): string {
  const html = marked.parse(visibleControls(text), { async: false, gfm: true }) as string;
  return sanitizeHtml(html, {
    allowedTags: [
      'h1',
      'h2',
      'h3',
      'h4',
      'h5',
      'h6',
      'p',
      'br',
      'hr',
      'blockquote',
      'pre',
      'code',
      'em',
      'strong',
      'del',
      'ul',
      'ol',
      'li',
      'table',
      'thead',
      'tbody',
      'tr',
      'th',
      'td',
      'a',
      'input',
    ],
    allowedAttributes: {
      a: ['href', 'title', 'rel', 'target'],
      code: ['class'],
      th: ['align'],
      td: ['align'],
      input: ['type', 'checked', 'disabled'],
    },
    allowedSchemes: ['http', 'https', 'mailto'],
    allowedSchemesAppliedToAttributes: ['href'],
    allowProtocolRelative: false,
    transformTags: {
      a: sanitizeHtml.simpleTransform('a', { rel: 'noopener noreferrer', target: '_blank' }),
      input: (tagName, attribs) =>
        attribs.type === 'checkbox'
          ? {
              tagName,
              attribs: {
                type: 'checkbox',
                disabled: '',
                ...(attribs.checked !== undefined ? { checked: '' } : {}),
              },
            }
          : { tagName: 'span', attribs: {} },
    },
    allowedClasses: { code: [/^language-[\w-]+$/] },
  });
}
