import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG } from '../../src/config/schema.js';
import { checkReadOnlyFence } from '../../src/doctor/read-fence.js';
import { AgentboxError } from '../../src/errors.js';
import { findRepo } from '../../src/git/repo.js';
import {
  assertFewIgnored,
  hiddenIgnored,
  ignoredPaths,
  MAX_IGNORED,
  nestedRepos,
  PACKAGE_FOLDERS,
} from '../../src/sandbox/ignored.js';
import { gitRepo } from '../helpers/git-repo.js';

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
      'pkg/sub/__pycache__/',
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

  it('nestedRepos: the index’s gitlinks (.gitmodules or not) and the untracked repositories inside', () => {
    const listing = [
      'tools/other/',
      'u.txt',
      '100644 aa 0\tsrc/a.ts',
      '160000 bb 0\tembedded',
      '160000 cc 0\tlibs/s p',
      '100644 dd 0\tname/',
      '',
    ].join('\0');
    expect(nestedRepos(listing)).toEqual(['tools/other/', 'embedded', 'libs/s p']);
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

describe('doctor’s read-only fence check', () => {
  it('says how many entries a read-only run hides, and fails, with the fix, where a run would be refused', async () => {
    const repo = gitRepo({ files: { '.gitignore': '.env\n*.o\n', 'a.c': 'int a;\n' } });
    fs.writeFileSync(path.join(repo.dir, '.env'), 'SECRET=1\n');
    const found = await findRepo(repo.dir);
    const ok = await checkReadOnlyFence(found, {}, DEFAULT_CONFIG);
    expect(ok).toMatchObject({ ok: true, detail: expect.stringContaining('hide 1 file(s) and folder(s)') });
    for (let i = 0; i <= MAX_IGNORED; i++) fs.writeFileSync(path.join(repo.dir, `f${i}.o`), '');
    const over = await checkReadOnlyFence(found, {}, DEFAULT_CONFIG);
    expect(over).toMatchObject({
      ok: false,
      detail: expect.stringContaining(`has ${MAX_IGNORED + 2} files and folders git ignores`),
    });
    expect(over.fix).toContain('sandbox.allow_read');
    const off = { ...DEFAULT_CONFIG, sandbox: { ...DEFAULT_CONFIG.sandbox, mode: 'off' as const } };
    expect((await checkReadOnlyFence(found, {}, off)).detail).toContain('not fenced');
  });
});
