import { marked } from 'marked';
import sanitizeHtml from 'sanitize-html';

/**
 * The controls a text from a run may hold that change what the page shows without being seen (C0
 * and C1 controls but line end and tab, DEL, the bidirectional ones: Trojan Source), as web/dom.js
 * shows them in the rest of the page: `⟨U+202E⟩`. A report's U+202E made `gnp.exe` read `exe.png`.
 */
const HIDDEN = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const visible = (text: string): string =>
  text.replace(HIDDEN, (c) => `⟨U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}⟩`);

/**
 * Markdown an agent wrote (its hidden controls shown, above), as HTML that is safe to put in the page: marked renders it, then
 * sanitize-html keeps an allow-list of formatting tags only — no script, style, iframe, form, event
 * attribute or `javascript:` link survives, whatever the agent wrote (raw HTML included). Links open
 * outside the page and send no referrer.
 */
export function renderMarkdown(text: string): string {
  const html = marked.parse(visible(text), { async: false, gfm: true }) as string;
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
