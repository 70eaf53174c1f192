import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/bin.js';

/**
 * The README is a front page (issue 16: at most 200 lines) and every link in it and in docs/
 * leads somewhere: the file exists, and a `#anchor` is a heading of that file (GitHub's slugs).
 */
const pages = [
  'README.md',
  ...fs
    .readdirSync(path.join(REPO_ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- _]/gu, '')
    .replace(/ /g, '-');
}

function anchors(text: string): Set<string> {
  const out = new Set<string>();
  let fence = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fence = !fence;
    const m = !fence && /^#{1,6} (.*)$/.exec(line);
    if (m) out.add(slug(m[1]!));
  }
  return out;
}

function links(text: string): string[] {
  const withoutCode = text.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...withoutCode.matchAll(/\]\(([^)\s]+)\)|<img src="([^"]+)"/g)].map((m) => m[1] ?? m[2]!);
}

describe('README and docs/', () => {
  it('the README fits on a screen or so: at most 200 lines', () => {
    expect(fs.readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8').split('\n').length).toBeLessThanOrEqual(
      200,
    );
  });

  it.each(pages)('every link in %s leads to a file and a heading that exist', (page) => {
    const text = fs.readFileSync(path.join(REPO_ROOT, page), 'utf8');
    const broken = links(text).filter((link) => {
      if (/^(https?:|mailto:)/.test(link)) return false;
      const [file, anchor] = link.split('#') as [string, string | undefined];
      const target =
        file === '' ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), file));
      const full = path.join(REPO_ROOT, target);
      if (!fs.existsSync(full)) return true;
      return (
        anchor !== undefined && target.endsWith('.md') && !anchors(fs.readFileSync(full, 'utf8')).has(anchor)
      );
    });
    expect(broken).toEqual([]);
  });

  it('the slugs are GitHub’s', () => {
    expect(slug('`agentbox recover [<run>] [--dry-run] [--force] [--json]`')).toBe(
      'agentbox-recover-run---dry-run---force---json',
    );
    expect(slug('Preparing a worktree (`runs.setup`)')).toBe('preparing-a-worktree-runssetup');
    expect(slug('The output contract (SUP-3, SUP-7)')).toBe('the-output-contract-sup-3-sup-7');
  });
});
