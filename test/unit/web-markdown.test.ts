import { describe, expect, it } from 'vitest';
import { renderMarkdown } from '../../src/web/markdown.js';

/** Every control that changes what the page shows without being seen (web/dom.js's set). */
const HIDDEN = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

describe('a report or plan on the run page (src/web/markdown.ts)', () => {
  it('shows its hidden controls as the rest of the page does: a U+202E no longer makes gnp.exe read exe.png', () => {
    // Found by a user's eye: report_html carried U+202E, ESC and BEL raw, in the text and in a heading.
    const html = renderMarkdown(
      '# fix \u202egnp.exe\n\nsee \u202egnp.exe \x1b]0;t\x07 and `\u2066code\u2069`\n',
    );
    expect(html).not.toMatch(HIDDEN);
    expect(html).toContain('⟨U+202E⟩gnp.exe');
    expect(html).toContain('⟨U+001B⟩]0;t⟨U+0007⟩');
    expect(html).toContain('<code>⟨U+2066⟩code⟨U+2069⟩</code>');
    expect(html).toMatch(/<h1>fix ⟨U\+202E⟩gnp\.exe<\/h1>/);
  });

  it('still keeps only formatting: no script, no handler, no javascript: link', () => {
    const html = renderMarkdown(
      '<img src=x onerror=alert(1)> <script>alert(2)</script> [x](javascript:alert(3))',
    );
    expect(html).not.toMatch(/<script|onerror|javascript:|<img/);
  });
});
