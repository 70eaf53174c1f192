import { describe, expect, it } from 'vitest';
import { renderMarkdown, renderReport, reportSections } from '../../src/web/markdown.js';

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

  it('an answer that leaves markup open cannot hide agentbox’s own sections after it (found by QA: an answer ending in <!-- hid the refused actions)', () => {
    const tail =
      '## Changes\n\n1 file(s) changed.\n\n## Refused actions\n\n- Bash (read-fence): cat ~/.ssh/id_rsa\n';
    for (const open of ['<!--', '<textarea>', '<style>', '<script>', '```', '~~~~', '<?php', '<![CDATA[']) {
      const report = `# fix: x\n\n- status: **REVIEW**\n\n## Result\n\nAll good, nothing refused.\n\n${open}\n\n${tail}`;
      // (the page as one document hid them: the reason for the cut)
      const html = renderReport(report);
      expect(html, open).toContain('<h2>Refused actions</h2>');
      expect(html, open).toContain('cat ~/.ssh/id_rsa');
      expect(html, open).toContain('<h2>Changes</h2>');
    }
    expect(renderMarkdown(`## Result\n\nok\n\n<!--\n\n${tail}`)).not.toContain('Refused actions');
  });

  it('cuts before each ## heading outside a code fence, and before agentbox’s own headings inside one', () => {
    expect(reportSections('# t\n\n## A\ntext\n```\n## not a heading\n```\n## B\nx')).toEqual([
      '# t\n',
      '## A\ntext\n```\n## not a heading\n```',
      '## B\nx',
    ]);
    expect(reportSections('## Result\n```\ncode\n## Changes\nreal')).toEqual([
      '## Result\n```\ncode',
      '## Changes\nreal',
    ]);
  });
});
