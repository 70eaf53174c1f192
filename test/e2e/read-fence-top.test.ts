import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bash, type Reply } from '../fixtures/model-server/index.js';
import { tempDir } from '../helpers/git-repo.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';
import { scriptedRun } from '../helpers/scripted-run.js';

/**
 * The fence outside the home (docs/security.md "Outside your home", "Your git config"): from a fix
 * run and from a scout, by `cat`, Python, the Read tool and a planted link, none of another
 * repository outside the home and /tmp (/var/tmp), another Claude Code session's /tmp/claude-<uid>,
 * another process's folder in /tmp, or a token in ~/.gitconfig reaches the model, and each try is
 * in events.jsonl. The other way: the agent's commits carry the person's identity from ~/.gitconfig.
 */
const MARK = 'TOP-SECRET';

describe('reads outside the home are denied by default (the real sandbox)', () => {
  let p: Project;
  let secrets: { file: string; mark: string }[];
  const made: string[] = [];

  beforeAll(async () => {
    p = await project({ files: { 'src/app.ts': 'export const x = 1;\n' } });
    // The identity comes from the person's ~/.gitconfig, as it usually does (not the repository's).
    p.repo.git('config', '--unset', 'user.name');
    p.repo.git('config', '--unset', 'user.email');
    const home = p.home.home;
    fs.writeFileSync(
      path.join(home, '.gitconfig'),
      `[user]\n\tname = Ada Person\n\temail = ada@example.com\n[url "https://x-token:${MARK}-gitconfig@example.com/"]\n\tinsteadOf = https://example.com/\n`,
    );
    const elsewhere = fs.realpathSync(fs.mkdtempSync('/var/tmp/rf-top-repo-'));
    const session = path.join('/tmp', `claude-${process.getuid!()}`, `-rf-top-${process.pid}`);
    const other = tempDir('rf-top-other-');
    made.push(elsewhere, session);
    secrets = [
      { file: path.join(elsewhere, 'src', 'secret.ts'), mark: `${MARK}-elsewhere` },
      { file: path.join(session, 'a1b2', 'tasks', 'bash-1.output'), mark: `${MARK}-session` },
      { file: path.join(other, 'notes.txt'), mark: `${MARK}-tmp` },
    ];
    for (const s of secrets) {
      fs.mkdirSync(path.dirname(s.file), { recursive: true });
      fs.writeFileSync(s.file, `${s.mark}\n`);
    }
    secrets.push({ file: path.join(home, '.gitconfig'), mark: `${MARK}-gitconfig` });
  }, 120_000);
  afterAll(async () => {
    for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
    await p?.cleanup();
  });

  async function attempt(type: 'fix' | 'scout', task: string, turns: Reply[]) {
    const run = await scriptedRun(p, type, task, turns);
    const events = p.events(run.name);
    const logged = (turn: number) =>
      JSON.stringify(events.filter((e) => run.results(turn).some((r) => r.toolUseId === e.toolUseId)));
    return { ...run, seen: run.requests.map((r) => r.allText).join('\n'), logged };
  }

  const files = () => secrets.map((s) => s.file);
  const python = () =>
    `python3 -c "
import sys
for f in sys.argv[1:]:
    try:
        print(f, 'READ', open(f).read())
    except OSError as e:
        print(f, 'refused:', e)
" ${files().join(' ')}`;
  const links = () => secrets.map((s, i) => `ln -s ${s.file} top-link-${i}`).join(' && ');

  it('a fix run reads none of them, by any route, each logged; its commits carry the person’s identity', async () => {
    const turns: Reply[] = [
      bash(`cat ${files().join(' ')}`),
      bash(python()),
      { tools: files().map((file_path) => ({ name: 'Read', input: { file_path } })) },
      bash(`${links()} && cat top-link-*`),
      { tools: secrets.map((_, i) => ({ name: 'Read', input: { file_path: `top-link-${i}` } })) },
      bash(
        'rm top-link-* && echo y > y.txt && git add y.txt && git commit -qm y && git log -1 --format=%an/%ae',
      ),
    ];
    const { name, seen, results, logged } = await attempt('fix', 'top hostile fix', turns);
    for (const s of secrets) expect(seen, s.file).not.toContain(s.mark);
    expect(p.read(name, 'raw/stream.jsonl')).not.toContain(MARK);
    for (const s of secrets)
      for (const turn of [0, 1, 2, 3, 4]) expect(logged(turn), `turn ${turn}`).toContain(s.file);
    expect(results(5)[0]!.content).toContain('Ada Person/ada@example.com');
    expect(p.state(name).status).toBe('REVIEW');
  }, 360_000);

  it('a scout reads none of them either, each logged', async () => {
    // NOTE: not another process's folder in /tmp, which a read-only run whose repository lies in
    // /tmp reads (docs/security.md "Outside your home": a temp folder is not listed entry by entry).
    const mine = secrets.filter((s) => !s.mark.endsWith('-tmp'));
    const names = mine.map((s) => s.file);
    // A hostile repository's links, which Claude Code's read-only classifier lets a scout cat.
    const dir = path.join(p.repo.dir, 'top-links');
    fs.mkdirSync(dir);
    for (const [i, s] of mine.entries()) fs.symlinkSync(s.file, path.join(dir, String(i)));
    const turns: Reply[] = [
      bash(`cat ${names.join(' ')}`),
      { tools: names.map((file_path) => ({ name: 'Read', input: { file_path } })) },
      // The pattern does not match itself (the command line is in the run's own files).
      bash(`grep -r 'TOP-SECRE[T]-' /var/tmp`),
      bash('cat src/app.ts'),
      bash('cat top-links/*'),
    ];
    const { name, seen, results, logged } = await attempt('scout', 'top hostile scout', turns);
    fs.rmSync(dir, { recursive: true, force: true });
    for (const s of mine) expect(seen, s.file).not.toContain(s.mark);
    expect(p.read(name, 'raw/stream.jsonl')).not.toContain(MARK);
    for (const s of mine)
      for (const turn of [0, 1, 4]) expect(logged(turn), `turn ${turn}`).toContain(s.file);
    // grep -r outside the repository: Claude Code's permission layer refuses it first, logged.
    expect(logged(2)).toContain('"refused"');
    expect(results(3)[0]!.content).toContain('export const x = 1');
    expect(p.state(name).status).toBe('DONE');
  }, 360_000);

  it('leaves no process behind', async () => {
    await expectNoProcessesLeft(p.tag);
  });
});
