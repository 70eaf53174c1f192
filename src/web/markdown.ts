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

/**
 * The headings agentbox writes its own sections of report.md under (src/run/end/report.ts): the
 * report is cut before each, whatever the agent's text around them says.
 */
const OWN_SECTIONS = new Set([
  '## Run',
  '## Result',
  '## Supervisor checks',
  '## Changes',
  '## Nested repositories',
  '## Files left out of the patch',
  '## Sensitive changes',
  '## Refused actions',
]);

/**
 * report.md as HTML, each `## ` section rendered alone: the agent's answer is one section of it,
 * and markup it leaves open (`<!--`, `<textarea>`, a code fence) would otherwise run on over
 * agentbox's own sections after it — its changes and refused actions (found by QA: an answer
 * ending in `<!--` hid them from the page). Pure.
 */
export function renderReport(text: string): string {
  return reportSections(text).map(renderMarkdown).join('');
}

/** `text` cut before each `## ` heading outside a code fence, and before agentbox's own headings anywhere. Pure. */
export function reportSections(text: string): string[] {
  const sections: string[][] = [[]];
  let fence: string | null = null;
  for (const line of text.split('\n')) {
    const own = OWN_SECTIONS.has(line.trimEnd());
    if (own || (fence === null && line.startsWith('## '))) {
      if (sections.at(-1)!.length > 0) sections.push([]);
      fence = null;
    } else {
      const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
      if (marker && fence === null) fence = marker;
      else if (marker && marker[0] === fence![0] && marker.length >= fence!.length && line.trim() === marker)
        fence = null;
    }
    sections.at(-1)!.push(line);
  }
  return sections.map((lines) => lines.join('\n'));
}
