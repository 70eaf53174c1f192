import { spawnSync } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { sandboxFromEnv } from '../../src/config/sandbox-env.js';
import { DEFAULT_CONFIG } from '../../src/config/schema.js';
import { processIo, processTerminal } from '../../src/context.js';
import { checkSandbox } from '../../src/doctor/checks.js';
import { FAILURE_EXIT_CODES, runExitCode } from '../../src/engines/exit.js';
import { cloneUrl } from '../../src/engines/repo-url.js';
import { GITHUB_REQUEST, STRICT } from '../../src/engines/script.js';
import { fenced, renderSummary } from '../../src/engines/summary.js';
import type { RunDetails } from '../../src/ledger/read.js';
import { FAILURE_KINDS } from '../../src/ledger/types.js';
import { isCi } from '../../src/util/ci.js';

describe('isCi', () => {
  it.each([
    [{ CI: 'true' }, true],
    [{ CI: '1' }, true],
    [{ CI: 'woodpecker' }, true],
    [{ CI: 'false' }, false],
    [{ CI: '0' }, false],
    [{ CI: '' }, false],
    [{}, false],
  ])('%j → %s', (env, expected) => {
    expect(isCi(env)).toBe(expected);
  });
});

/** A stream that claims to be a terminal, as `docker run -t` gives a CI job. */
function tty(): NodeJS.ReadStream & NodeJS.WriteStream {
  return Object.assign(new PassThrough(), { isTTY: true, columns: 120 }) as never;
}

describe('in CI the process io is a log, even on a terminal', () => {
  const streams = () => ({ stdin: tty(), stdout: tty(), stderr: tty() });

  it('a terminal outside CI: live output, colour, prompts', () => {
    const io = processIo(streams(), { TERM: 'xterm' });
    expect([io.isTTY, io.color, typeof io.ask]).toEqual([true, true, 'function']);
    expect(processTerminal(streams(), {}).isTTY).toBe(true);
  });

  it('the same terminal with CI set: plain lines, no colour, nobody asked', () => {
    const io = processIo(streams(), { TERM: 'xterm', CI: 'true' });
    expect([io.isTTY, io.color, io.ask]).toEqual([false, false, undefined]);
    expect(processTerminal(streams(), { CI: 'true' }).isTTY).toBe(false);
  });
});

describe('AGENTBOX_SANDBOX over sandbox.mode', () => {
  const required = DEFAULT_CONFIG.sandbox;
  const off = { ...required, mode: 'off' as const };
  it.each([
    [required, undefined, 'required'],
    [required, '', 'required'],
    [required, 'container', 'off'],
    [off, 'required', 'required'],
    [off, undefined, 'off'],
  ])('%j with %s → %s', (sandbox, value, mode) => {
    expect(sandboxFromEnv(sandbox, { AGENTBOX_SANDBOX: value }).mode).toBe(mode);
  });

  it('anything else is an error naming the values', () => {
    expect(() => sandboxFromEnv(required, { AGENTBOX_SANDBOX: 'none' })).toThrow(/AGENTBOX_SANDBOX="none"/);
  });

  it('agentbox doctor says where the opt-out came from', () => {
    const config = { ...DEFAULT_CONFIG, sandbox: off };
    expect(checkSandbox({ AGENTBOX_SANDBOX: 'container' }, config).detail).toContain(
      'AGENTBOX_SANDBOX=container',
    );
    expect(checkSandbox({}, config).detail).toContain('agentbox.yaml');
  });
});

describe('the GitHub request script (bash, as the workflow runs it)', () => {
  const ISSUE = { ISSUE_NUMBER: '7', ISSUE_TITLE: 'Login is slow $(id)', ISSUE_BODY: 'It takes `10 s`.' };
  const issueTask = 'GitHub issue #7: Login is slow $(id)\n\nIt takes `10 s`.';
  const request = (env: Record<string, string>) => {
    const script = `${STRICT}${GITHUB_REQUEST}printf '%s\\0%s' "$AGENTBOX_TYPE" "$AGENTBOX_TASK"\n`;
    const result = spawnSync('bash', ['--noprofile', '--norc', '-c', script], {
      env: { PATH: process.env.PATH, ...env },
      encoding: 'utf8',
    });
    return result.status === 0 ? result.stdout.split('\0') : [`exit ${result.status}`, result.stderr.trim()];
  };

  it.each([
    [{ EVENT_NAME: 'workflow_dispatch', INPUT_TYPE: 'scout', INPUT_TASK: 'why?' }, ['scout', 'why?']],
    [{ EVENT_NAME: 'issues', ...ISSUE }, ['fix', issueTask]],
    [{ EVENT_NAME: 'issue_comment', ...ISSUE, COMMENT_BODY: '/agentbox review' }, ['review', issueTask]],
    [
      { EVENT_NAME: 'issue_comment', ...ISSUE, COMMENT_BODY: '/agentbox   fix  a;b  \r\n  more\r\n\r\n' },
      ['fix', 'a;b  \n  more'],
    ],
    [
      { EVENT_NAME: 'issue_comment', COMMENT_BODY: '/agentbox fix "$HOME" \\ * ?' },
      ['fix', '"$HOME" \\ * ?'],
    ],
    [{ EVENT_NAME: 'push' }, ['exit 2', 'agentbox: this workflow does not start runs on "push" events']],
  ])('%j → %j', (env, expected) => {
    expect(request(env)).toEqual(expected);
  });
});

describe('exit codes in CI', () => {
  it('0 for DONE and REVIEW, one distinct code per failure kind, 1 otherwise', () => {
    expect(runExitCode('DONE', null)).toBe(0);
    expect(runExitCode('REVIEW', null)).toBe(0);
    expect(runExitCode('CRASHED', 'api_error')).toBe(14);
    expect(runExitCode('ABORTED', 'violation')).toBe(19);
    expect(runExitCode('CRASHED', null)).toBe(1);
    const codes = FAILURE_KINDS.map((k) => FAILURE_EXIT_CODES[k]);
    expect(new Set(codes).size).toBe(FAILURE_KINDS.length);
    // Never a code the shell or agentbox already means something by (1, 2, 70, 126+).
    for (const code of codes) expect(code >= 10 && code < 64).toBe(true);
  });
});

describe('cloneUrl', () => {
  it.each([
    ['https://github.com/team/app.git', 'https://github.com/team/app.git', false],
    ['git@github.com:team/app.git', 'https://github.com/team/app.git', true],
    ['ssh://git@gitlab.example:2222/team/app.git', 'https://gitlab.example/team/app.git', true],
    ['https://user:ghp_secret@github.com/team/app.git', 'https://github.com/team/app.git', true],
  ])('%s → %s', (origin, url, noted) => {
    const result = cloneUrl(origin);
    expect(result.url).toBe(url);
    expect(result.note !== null).toBe(noted);
    expect(result.url).not.toContain('secret');
  });

  it.each(['/srv/git/app.git', 'file:///srv/git/app.git', '../app'])('refuses %s', (origin) => {
    expect(() => cloneUrl(origin)).toThrow(/cannot clone/);
  });
});

describe('the summary a CI job posts', () => {
  it('fenced text stays text, whatever backticks it holds', () => {
    const text = 'see ```evil``` and @org/team ![x](https://t.example/p.png)';
    const out = fenced(text);
    expect(out.startsWith('````text\n')).toBe(true);
    expect(out.endsWith('\n````\n')).toBe(true);
  });

  const run = (status: string, failure: object | null): RunDetails =>
    ({
      name: '26-11-25_0930__add-a-file__a1b2c3',
      dir: '/x',
      files: [],
      meta: { run_id: 'a1b2c3', type: 'fix', task: 'add a file @everyone', options: { max_cost_usd: 5 } },
      state: {
        status,
        failure,
        tool_calls: 3,
        usage: {
          agent: { cost_usd: 0.25 },
          supervisor: { cost_usd: 0.0125 },
        },
      },
    }) as never;

  it('a fix in REVIEW: status, cost, the report quoted, and the merge on one line', () => {
    const md = renderSummary({
      run: run('REVIEW', null),
      report: '# Report\nadded it',
      changedFiles: 2,
      logUrl: 'https://ci.example/1',
    });
    expect(md).toContain('### agentbox fix `26-11-25_0930__add-a-file__a1b2c3`: REVIEW');
    expect(md).toContain('| cost | $0.2625 of $5.00 |');
    expect(md).toContain('| changes | 2 file(s) |');
    expect(md).toContain('| log | https://ci.example/1 |');
    expect(md).toContain('```text\n# Report\nadded it\n```');
    expect(md).toContain('```text\nadd a file @everyone\n```');
    expect(md).toContain('agentbox fetch && agentbox diff a1b2c3 && agentbox merge a1b2c3');
  });

  it('a failed run says what went wrong and where to look', () => {
    const md = renderSummary({
      run: run('CRASHED', { kind: 'api_error', message: 'HTTP 401' }),
      report: null,
      changedFiles: 0,
    });
    expect(md).toContain(': CRASHED');
    expect(md).toContain('| status | CRASHED (api_error) |');
    expect(md).toContain('```text\nHTTP 401\n```');
    expect(md).toContain('agentbox fetch && agentbox show a1b2c3');
  });

  it('what the agent wrote is text on a terminal or in a job log: no escape sequence, no bidi override', () => {
    const md = renderSummary({
      run: run('REVIEW', null),
      report: 'done \u001b]52;c;ZXZpbA==\u0007\u001b[2Jhere \u202eright',
      changedFiles: 1,
    });
    expect(md).toContain('```text\ndone here \\u202eright\n```');
    expect(md).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
  });

  it('a long report is cut, and says so', () => {
    const report = Array.from({ length: 200 }, (_, i) => `line ${i}`).join('\n');
    const md = renderSummary({ run: run('DONE', null), report, changedFiles: 0 });
    expect(md).toContain('line 59\n');
    expect(md).not.toContain('line 60\n');
    expect(md).toContain('the rest is in the run’s report.md');
  });
});
