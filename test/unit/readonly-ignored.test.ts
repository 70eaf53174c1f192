import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AgentboxError } from '../../src/errors.js';
import {
  assertFewIgnored,
  hiddenIgnored,
  ignoredPaths,
  MAX_IGNORED,
  PACKAGE_FOLDERS,
} from '../../src/sandbox/ignored.js';

const ROOT = path.join(import.meta.dirname, '..', '..');

/** What a read-only run hides of what git ignores (src/sandbox/ignored.ts). */
describe('the ignored entries a read-only run hides', () => {
  // (a stand-in file system: `links` maps a path to where it leads; anything else is itself)
  const real = (links: Record<string, string | null>) => (p: string) => (p in links ? links[p]! : p);

  it('git’s names as real paths inside the repository, once each; not a package folder at any depth, nor a link out', () => {
    const names = [
      '.env',
      'build/',
      'conf/dev.key',
      'node_modules/',
      'packages/web/node_modules/',
      '.venv/',
      'sys',
      'alias',
      'gone',
      'loop/',
      '',
    ];
    const out = ignoredPaths(
      '/r',
      names,
      real({ '/r/sys': '/etc', '/r/alias': '/r/.env', '/r/gone': null, '/r/loop': '/r' }),
    );
    expect(out).toEqual(['/r/.env', '/r/build', '/r/conf/dev.key']);
  });

  it('what the person opened (sandbox.allow_read) is not hidden', () => {
    expect(hiddenIgnored(['/r/.env', '/r/objs/a.o', '/r/objs'], ['/r/objs'])).toEqual(['/r/.env']);
    expect(hiddenIgnored(['/r/.env'], ['/r'])).toEqual([]);
  });

  it(`past ${MAX_IGNORED}: refused, naming the first few relative to the repository, and the person’s config file`, () => {
    const many = Array.from({ length: MAX_IGNORED + 1 }, (_, i) => `/r/d${i}/a.o`);
    expect(() => assertFewIgnored(many.slice(0, MAX_IGNORED), '/r')).not.toThrow();
    let error: unknown;
    try {
      assertFewIgnored(many, '/r', '/h/.config/agentbox/config.yaml');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(AgentboxError);
    expect(String((error as Error).message)).toContain(
      `/r has ${MAX_IGNORED + 1} files and folders git ignores (d0/a.o, d1/a.o, d2/a.o, …)`,
    );
    expect((error as AgentboxError).hint).toContain('/h/.config/agentbox/config.yaml');
  });

  it('docs/security.md names every package folder a read-only run still reads', () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs/security.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## Read-only runs'));
    for (const name of PACKAGE_FOLDERS) expect(section, name).toContain(`\`${name}\``);
  });
});
