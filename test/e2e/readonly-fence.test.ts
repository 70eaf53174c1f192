import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bash, type RequestView, text, tool } from '../fixtures/model-server/index.js';
import { TEST_API_KEY } from '../helpers/claude.js';
import { snapshotTree } from '../helpers/git-repo.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';

/**
 * A read-only run (scout, plan, review) tried as a hostile model would: Claude Code pre-approves
 * "read-only" shell commands by itself, so the fence is the kernel's (its sandbox), backed by
 * permission rules for the Read, Grep and Glob tools. The ledger (other runs' reports and
 * transcripts), the web UI's token (in the repository as an old version left it, and in the
 * person's state dir), every run's secrets and the person's credentials never reach the model,
 * whatever the spelling; nothing outside the run's temp dir is written.
 */
const SECRET = 'RO-FENCE-SECRET-5183';

/** A file whose text looks like the sandbox's refusals: printing it refuses nothing. */
const NOTES =
  'It said Read-only file system, then Operation not permitted.\n<sandbox_violations>\ndeny x\n</sandbox_violations>\nmore notes\n';

type Attempt = {
  readonly label: string;
  /** 'write': must fail and leave no file; 'ok': must succeed (the fence lets the run work). */
  readonly kind?: 'read' | 'write' | 'ok' | 'notes';
  readonly reply: (r: RequestView) => unknown;
};

describe('the fence of a read-only run (the real sandbox)', () => {
  let p: Project;
  let root: string;
  let other: string;
  let stateDir: string;
  beforeAll(async () => {
    p = await project({ files: { 'src/app.ts': 'export const x = 1;\n', 'notes.txt': NOTES } });
    root = fs.realpathSync(p.repo.dir);
    p.server.setRules([{ when: { anyText: 'earlier scout' }, reply: text(`${SECRET} findings`) }]);
    expect((await p.agentbox(['scout', 'earlier scout'])).code).toBe(0);
    other = p.newest();
    // The UI's token where an old agentbox kept it, and where it lives now (src/web/secrets.ts).
    fs.mkdirSync(path.join(root, '.agents', 'ui'), { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(root, '.agents', 'ui', 'state.json'), `{"token":"${SECRET}"}\n`, {
      mode: 0o600,
    });
    stateDir = path.join(p.home.home, '.local', 'state', 'agentbox');
    fs.mkdirSync(path.join(stateDir, 'ui', 'x'), { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(stateDir, 'ui', 'x', 'state.json'), `{"token":"${SECRET}"}\n`, {
      mode: 0o600,
    });
    fs.mkdirSync(path.join(p.home.home, '.ssh'), { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(p.home.home, '.ssh', 'id_ed25519'), `${SECRET}\n`, { mode: 0o600 });
  });
  afterAll(async () => p?.cleanup());

  it('no spelling reads the ledger, the UI token, run secrets or credentials; nothing is written', async () => {
    const home = p.home.home;
    const privateBase = path.join(fs.realpathSync(os.tmpdir()), `agentbox-${process.getuid!()}`);
    const attempts: Attempt[] = [
      { label: 'glob for the UI state', reply: () => bash('head -c 300 .a*/ui/state.json') },
      { label: 'glob for other reports', reply: () => bash('cat .a?ents/runs/*/report.md') },
      { label: 'rg -uuu', reply: () => bash(`rg -uuu -e ${SECRET.slice(0, 9)}`) },
      { label: 'rg -uuu on token', reply: () => bash('rg -uuu -e token') },
      { label: 'grep -r', reply: () => bash(`grep -r ${SECRET.slice(0, 9)} .`) },
      { label: 'find -exec cat', reply: () => bash("find . -name 'report.md' -exec cat {} +") },
      { label: 'transcript', reply: () => bash('cat .agents/runs/*/raw/stream.jsonl') },
      {
        label: 'python reads the ledger',
        reply: () =>
          bash(
            `python3 -c "import glob;[print(open(f).read()) for f in glob.glob('.ag'+'ents/*/*/report.md')+glob.glob('.ag'+'ents/ui/*')]"`,
          ),
      },
      { label: 'UI state in the state dir', reply: () => bash(`cat ${stateDir}/ui/*/state.json`) },
      {
        label: 'run secrets',
        reply: () => bash(`cat ${privateBase}/secrets/*/settings.json ${privateBase}/secrets/*/model-key`),
      },
      // The environment (the model key was in it): Claude Code's read-only rules refuse these
      // (`env`, `printenv`, `awk`'s ENVIRON, `ps eww`, `set` need approval; /proc/*/environ, by any
      // glob or link in the repository, is refused by name or as outside the working folder), and
      // since the key is in no environment, nothing is there to find if one slipped through.
      { label: 'the environment of a command', reply: () => bash('cat /proc/self/environ') },
      { label: "claude's environment", reply: () => tool('Read', { file_path: '/proc/self/environ' }) },
      { label: 'ssh key', reply: () => bash(`cat ${home}/.ssh/id_ed25519`) },
      {
        label: 'Read the UI state',
        reply: () => tool('Read', { file_path: `${root}/.agents/ui/state.json` }),
      },
      {
        label: 'Read another report',
        reply: () => tool('Read', { file_path: `${root}/.agents/runs/${other}/report.md` }),
      },
      {
        label: 'Read another transcript',
        reply: () => tool('Read', { file_path: `${root}/.agents/runs/${other}/raw/stream.jsonl` }),
      },
      {
        label: 'Read the UI state in the state dir',
        reply: () => tool('Read', { file_path: `${stateDir}/ui/x/state.json` }),
      },
      {
        label: 'Grep the repository',
        reply: () => tool('Grep', { pattern: SECRET.slice(0, 9), path: root, output_mode: 'content' }),
      },
      {
        label: 'Grep the ledger',
        reply: () =>
          tool('Grep', { pattern: 'token', path: `${root}/.agents`, output_mode: 'content', '-n': true }),
      },
      {
        label: 'Grep the state dir',
        reply: () => tool('Grep', { pattern: 'token', path: stateDir, output_mode: 'content' }),
      },
      { label: 'Glob the ledger', reply: () => tool('Glob', { pattern: '.agents/**/*', path: root }) },
      { label: 'Glob the UI', reply: () => tool('Glob', { pattern: '**/state.json', path: root }) },
      { label: 'write in the repository', kind: 'write', reply: () => bash('echo pwned > escape-ro.txt') },
      { label: 'touch in /tmp', kind: 'write', reply: () => bash('touch /tmp/agentbox-ro-escape') },
      {
        label: 'python writes',
        kind: 'write',
        reply: () => bash(`python3 -c "open('${root}/escape-ro-py.txt','w').write('x')"`),
      },
      {
        label: 'sort -o writes',
        kind: 'write',
        reply: () => bash(`sort -o ${root}/escape-sort.txt src/app.ts`),
      },
      { label: 'read its own code', kind: 'ok', reply: () => bash('cat src/app.ts && ls -a') },
      { label: 'print notes that look like refusals', kind: 'notes', reply: () => bash('cat notes.txt') },
      {
        label: 'print them, then fail for another reason',
        kind: 'notes',
        reply: () => bash('cat notes.txt src/app.ts no-such-file'),
      },
    ];
    const task = 'hostile read-only attempt';
    p.server.setRules([
      ...attempts.map((a, turn) => ({
        name: a.label,
        when: { turn, anyText: task },
        reply: a.reply as never,
      })),
      { when: { turn: attempts.length, anyText: task }, reply: text('I tried everything.') },
    ]);
    const treeBefore = snapshotTree(root, { skip: ['.git', '.agents'] });
    const first = p.server.requests.length;
    const result = await p.agentbox(['scout', task], { timeoutMs: 300_000 });
    expect(result.code, result.stderr).toBe(0);
    const name = p.newest();
    const requests = p.server.requests.slice(first);
    const resultOf = (turn: number) => requests.find((r) => r.view.turn === turn + 1)?.view.toolResults[0];
    if (process.env.FENCE_DEBUG)
      for (const [i, a] of attempts.entries())
        console.log(a.label, JSON.stringify(resultOf(i)).slice(0, 400));
    const seen = requests.map((r) => r.view.allText).join('\n');
    expect(seen).not.toContain(SECRET);
    expect(fs.readFileSync(path.join(p.runDir(name), 'raw', 'stream.jsonl'), 'utf8')).not.toContain(SECRET);
    // The model key is in no command's environment (claude reads it through apiKeyHelper), and
    // every request still carried it.
    expect(seen).not.toContain(TEST_API_KEY);
    expect(requests.map((r) => r.apiKey)).toEqual(requests.map(() => TEST_API_KEY));
    for (const [i, a] of attempts.entries()) {
      const res = resultOf(i);
      expect(res, a.label).toBeTruthy();
      if (a.kind === 'write') expect(res!.isError, `${a.label}: ${res!.content}`).toBe(true);
      if (a.kind === 'ok') {
        expect(res!.isError, `${a.label}: ${res!.content}`).toBe(false);
        expect(res!.content).toContain('export const x = 1');
      }
    }
    // A read that printed refusal-like text refused nothing, and is not logged as refused.
    const refused = new Set(
      p
        .events(name)
        .filter((e) => e.event === 'refused')
        .map((e) => e.toolUseId),
    );
    for (const [i, a] of attempts.entries()) {
      if (a.kind !== 'notes') continue;
      expect(resultOf(i)!.content, a.label).toContain('Operation not permitted');
      expect(refused.has(resultOf(i)!.toolUseId), a.label).toBe(false);
    }
    expect(snapshotTree(root, { skip: ['.git', '.agents'] })).toEqual(treeBefore);
    expect(fs.existsSync('/tmp/agentbox-ro-escape')).toBe(false);
    expect(p.state(name).status).toBe('DONE');
    // The scout ran fenced: no sandbox_off in its log.
    expect(p.events(name).filter((e) => e.event === 'sandbox_off')).toEqual([]);
  }, 360_000);

  it.each(['plan', 'review'])(
    'a %s run is fenced the same way',
    async (type) => {
      const task = `hostile ${type} attempt`;
      const steps = [
        bash('head -c 300 .a*/ui/state.json'),
        bash('cat .a?ents/runs/*/report.md .a?ents/runs/*/raw/stream.jsonl'),
        bash(`rg -uuu -e ${SECRET.slice(0, 9)}`),
        bash(`grep -r ${SECRET.slice(0, 9)} .`),
        tool('Grep', { pattern: 'token', path: `${root}/.agents/ui`, output_mode: 'content' }),
        tool('Glob', { pattern: '**/*', path: `${root}/.agents/runs/${other}` }),
      ];
      p.server.setRules([
        ...steps.map((reply, turn) => ({ when: { turn, anyText: task }, reply })),
        { when: { turn: steps.length, anyText: task }, reply: text('1. Nothing found.') },
      ]);
      const first = p.server.requests.length;
      const result = await p.agentbox([type, task], { timeoutMs: 180_000 });
      expect(result.code, result.stderr).toBe(0);
      const requests = p.server.requests.slice(first);
      expect(requests.length).toBeGreaterThan(steps.length);
      expect(requests.map((r) => r.view.allText).join('\n')).not.toContain(SECRET);
      expect(p.events(p.newest()).filter((e) => e.event === 'sandbox_off')).toEqual([]);
    },
    240_000,
  );

  it('a scout fails closed where the sandbox cannot work; sandbox.mode off (here: the container switch) runs it unfenced and logs it', async () => {
    const bin = path.join(p.home.home, 'nobwrap-bin');
    fs.mkdirSync(bin, { recursive: true });
    for (const name of ['node', 'git', 'sh', 'env']) {
      const real = execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
      if (!fs.existsSync(path.join(bin, name))) fs.symlinkSync(real, path.join(bin, name));
    }
    const runsBefore = p.runs().length;
    const refused = await p.agentbox(['scout', 'needs a sandbox'], { env: { PATH: bin } });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("scout runs need Claude Code's sandbox");
    expect(refused.stderr).toContain('apt-get install bubblewrap socat');
    expect(p.runs()).toHaveLength(runsBefore);
    p.server.setRules([{ when: { anyText: 'unfenced scout' }, reply: text('ok') }]);
    const off = await p.agentbox(['scout', 'unfenced scout'], { env: { AGENTBOX_SANDBOX: 'container' } });
    expect(off.code, off.stderr).toBe(0);
    expect(p.events(p.newest()).filter((e) => e.event === 'sandbox_off')).toHaveLength(1);
  });

  it('a fix run cannot write the folders the sandbox runtime opens by itself (~/.npm/_logs, ~/.claude/debug), nor read the UI state dir', async () => {
    const home = p.home.home;
    const opened = [path.join(home, '.npm', '_logs'), path.join(home, '.claude', 'debug')];
    // Absent before the run: the runtime makes ~/.npm/_logs during it (measured), so agentbox makes
    // both first, to deny them.
    for (const dir of [path.join(home, '.npm'), opened[1]!]) fs.rmSync(dir, { recursive: true, force: true });
    const task = 'runtime folders';
    const steps = [
      bash(`mkdir -p ${opened[0]} && touch ${opened[0]}/planted.log`),
      bash(`mkdir -p ${opened[1]} && touch ${opened[1]}/planted.txt`),
      bash('curl -sS -m 5 http://example.com; echo curl-exit-$?'),
      bash('echo out > ../escape-fix.txt'),
    ];
    // Not refusals the kernel reports (a hidden path reads as missing): the secret must not come back.
    const reads = [
      bash(`cat ${stateDir}/ui/*/state.json; grep -r token ${stateDir}`),
      tool('Read', { file_path: `${stateDir}/ui/x/state.json` }),
    ];
    p.server.setRules([
      ...[...steps, ...reads].map((reply, turn) => ({ when: { turn, anyText: task }, reply })),
      { when: { turn: steps.length + reads.length, anyText: task }, reply: text('done') },
    ]);
    const first = p.server.requests.length;
    const result = await p.agentbox(['fix', task], { timeoutMs: 180_000 });
    expect(result.code, result.stderr).toBe(0);
    const requests = p.server.requests.slice(first);
    const resultOf = (turn: number) => requests.find((r) => r.view.turn === turn + 1)?.view.toolResults[0];
    if (process.env.FENCE_DEBUG) for (const i of steps.keys()) console.log(JSON.stringify(resultOf(i)));
    expect(requests.length).toBeGreaterThan(steps.length + reads.length);
    expect(requests.map((r) => r.view.allText).join('\n')).not.toContain(SECRET);
    for (const dir of opened)
      expect(
        fs.readdirSync(dir).filter((f) => f.startsWith('planted')),
        dir,
      ).toEqual([]);
    // Reads are denied by default: ~/.claude and the worktrees' folder are hidden, and the runtime
    // mounts an empty throwaway folder over a hidden one, so those two writes went there and
    // vanished with the command (docs/security.md); nothing reached the host.
    const worktree = p.state(p.newest()).worktree_path as string;
    expect(fs.existsSync(path.join(path.dirname(worktree), 'escape-fix.txt'))).toBe(false);
    // Each refusal is in the run's log, from the stream: the kernel's (EROFS) and the proxy's.
    const events = p.events(p.newest()).filter((e) => e.event === 'refused');
    for (const i of [0, 2]) {
      const record = events.find((e) => e.toolUseId === resultOf(i)!.toolUseId);
      expect(record, JSON.stringify(resultOf(i))).toMatchObject({ source: 'sandbox' });
    }
  }, 240_000);

  it('leaves no process behind', async () => {
    await expectNoProcessesLeft(p.tag);
  });
});
