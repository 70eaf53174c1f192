import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { catchesSignal, caughtIn } from '../../src/process/signals.js';
import { waitFor } from '../helpers/pty.js';

describe('catchesSignal', () => {
  it.each([
    ['SigCgt:\t0000000000000800', 12, true],
    ['SigCgt:\t0000000000000800', 10, false],
    ['SigCgt:\t0000000180004a02', 2, true],
    ['SigCgt:\t0000000000000000', 12, false],
    ['Name:\tnode', 12, null],
  ])('%s, signal %d: %s', (status, signal, expected) => {
    expect(caughtIn(`Name:\tx\n${status}\nSigBlk:\t0\n`, signal)).toBe(expected);
  });

  it('sees a real process install its handler', async () => {
    const plain = spawn('sleep', ['5']);
    const node = spawn(process.execPath, [
      '-e',
      "process.on('SIGUSR2', () => {}); setTimeout(() => {}, 5000)",
    ]);
    try {
      await waitFor(() => catchesSignal(node.pid!, 'SIGUSR2'), 'node to catch SIGUSR2');
      expect(catchesSignal(plain.pid!, 'SIGUSR2')).toBe(false);
      expect(catchesSignal(999_999_999, 'SIGUSR2')).toBeNull();
    } finally {
      plain.kill('SIGKILL');
      node.kill('SIGKILL');
    }
  });
});
