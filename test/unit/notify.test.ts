import { describe, expect, it } from 'vitest';
import { alertText, notifyPayload, terminalAlert } from '../../src/notify/payload.js';

const STATE = {
  schema_version: 1,
  status: 'CRASHED',
  pid: null,
  pid_start: null,
  claude_pid: null,
  claude_pid_start: null,
  session_id: null,
  worktree_path: null,
  branch: null,
  started_at: '2026-11-24T10:00:00.000Z',
  ended_at: '2026-11-24T10:01:30.000Z',
  last_heartbeat: null,
  config_hash: 'x',
  failure: { kind: 'timeout', message: 'stopped after 30m' },
  tool_calls: 4,
  updated_at: '2026-11-24T10:01:30.000Z',
  usage: {
    agent: {
      cost_usd: 0.5,
      calls: 1,
      input_tokens: 0,
      output_tokens: 0,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
    },
    supervisor: {
      cost_usd: 0.25,
      calls: 1,
      input_tokens: 0,
      output_tokens: 0,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
    },
  },
} as never;

describe('notify payload and bell', () => {
  it('carries the outcome, its cost and how long it took', () => {
    expect(
      notifyPayload({
        event: 'ended',
        name: '26-11-24_1000__fix-it__a1b2c3',
        type: 'fix',
        task: 'fix it',
        state: STATE,
        changes: 2,
        report: '/r/report.md',
        next: 'agentbox resume a1b2c3',
      }),
    ).toEqual({
      event: 'ended',
      run: '26-11-24_1000__fix-it__a1b2c3',
      id: 'a1b2c3',
      type: 'fix',
      status: 'CRASHED',
      failure: { kind: 'timeout', message: 'stopped after 30m' },
      task: 'fix it',
      duration_ms: 90_000,
      cost_usd: 0.75,
      tool_calls: 4,
      changes: 2,
      report: '/r/report.md',
      next: 'agentbox resume a1b2c3',
    });
  });

  it.each([
    ['iTerm.app', '\u001b]9;hi there\u0007\u0007'],
    ['WezTerm', '\u001b]9;hi there\u0007\u0007'],
    ['ghostty', '\u001b]9;hi there\u0007\u0007'],
    ['vscode', '\u001b]99;;hi there\u001b\\\u0007'],
    ['Apple_Terminal', '\u0007'],
    [undefined, '\u0007'],
  ])('TERM_PROGRAM=%s: %j', (program, expected) => {
    expect(terminalAlert('hi there', { TERM_PROGRAM: program })).toBe(expected);
  });

  it('kitty (TERM=xterm-kitty, no TERM_PROGRAM) gets OSC 99, then the bell', () => {
    expect(terminalAlert('hi; there', { TERM: 'xterm-kitty' })).toBe('\u001b]99;;hi; there\u001b\\\u0007');
    // Inside tmux in kitty TERM is tmux's: the sequence would not reach kitty, only the bell.
    expect(terminalAlert('hi', { TERM: 'tmux-256color', KITTY_WINDOW_ID: '1' })).toBe('\u0007');
  });

  it('a task cannot end the OSC 99 sequence early either', () => {
    expect(terminalAlert('a\u001b\\b\u0007c', { TERM: 'xterm-kitty' })).toBe(
      '\u001b]99;;ab\\x07c\u001b\\\u0007',
    );
  });

  it('a task cannot end the escape sequence early or inject another', () => {
    const alert = terminalAlert('evil\u0007\u001b]52;c;cHduZWQ=\u0007\nnext', { TERM_PROGRAM: 'iTerm.app' });
    // The one sanitiser (src/util/terminal-text.ts): the clipboard write removed whole, the rest shown.
    expect(alert).toBe('\u001b]9;evil\\x07\\nnext\u0007\u0007');
    // A bidi override cannot reorder what the notification says.
    expect(terminalAlert('ok \u202egnp.exe', { TERM_PROGRAM: 'iTerm.app' })).toBe(
      '\u001b]9;ok \\u202egnp.exe\u0007\u0007',
    );
  });

  it('says who waits or how it ended, on one line', () => {
    const payload = notifyPayload({
      event: 'waiting',
      name: '26-11-24_1000__x__a1b2c3',
      type: 'interactive',
      task: 'line one\nline two',
      state: STATE,
      changes: 0,
      report: null,
      next: null,
    });
    expect(alertText(payload)).toBe('agentbox: a1b2c3 waits for you — line one');
  });
});
