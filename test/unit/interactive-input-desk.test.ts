import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { InputDesk } from '../../src/interactive/input-desk.js';
import { SessionLog } from '../../src/interactive/log.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentbox-desk-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const desk = () => new InputDesk(new SessionLog(path.join(dir, `log-${Math.random()}`)), () => null);

// The desk's own timers and clock are driven from here: a slow machine cannot move them.
beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

/** The waiting bell goes to the terminal claude draws on: only once its screen is quiet. */
describe('InputDesk.whenQuietIdle', () => {
  it('waits until claude has been quiet for a moment, however long it keeps drawing (up to the cap)', () => {
    const d = desk();
    d.becomeIdle();
    const calls: number[] = [];
    d.whenQuietIdle(() => calls.push(Date.now()), 3000);
    // Claude redraws for 500 ms after its Stop, a frame every 100 ms.
    for (let i = 0; i < 6; i++) {
      d.output('frame');
      vi.advanceTimersByTime(100);
    }
    expect(calls).toEqual([]);
    vi.advanceTimersByTime(150);
    expect(calls).toEqual([]);
    // Quiet for 300 ms after the last frame (at 500 ms): called then, once.
    vi.advanceTimersByTime(2000);
    expect(calls).toEqual([800]);
  });

  it('gives up waiting for quiet at the cap', () => {
    const d = desk();
    d.becomeIdle();
    const calls: number[] = [];
    d.whenQuietIdle(() => calls.push(Date.now()), 400);
    for (let i = 0; i < 8; i++) {
      d.output('spinner');
      vi.advanceTimersByTime(80);
    }
    expect(calls).toEqual([400]);
  });

  it('a person who typed meanwhile is there: nothing is called', () => {
    const d = desk();
    d.becomeIdle();
    let called = 0;
    d.output('frame');
    d.whenQuietIdle(() => called++, 3000);
    d.busy();
    vi.advanceTimersByTime(5000);
    expect(called).toBe(0);
  });
});
