import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputDesk } from '../../src/interactive/input-desk.js';
import { SessionLog } from '../../src/interactive/log.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentbox-desk-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const desk = () => new InputDesk(new SessionLog(path.join(dir, `log-${Math.random()}`)), () => null);

/** The waiting bell goes to the terminal claude draws on: only once its screen is quiet. */
describe('InputDesk.whenQuietIdle', () => {
  it('waits until claude has been quiet for a moment, however long it keeps drawing (up to the cap)', async () => {
    const d = desk();
    d.becomeIdle();
    const calls: number[] = [];
    const start = Date.now();
    d.whenQuietIdle(() => calls.push(Date.now() - start), 3000);
    // Claude redraws for 600 ms after its Stop.
    for (let i = 0; i < 6; i++) {
      d.output('frame');
      await sleep(100);
    }
    expect(calls).toEqual([]);
    await sleep(500);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toBeGreaterThanOrEqual(800);
  });

  it('gives up waiting for quiet at the cap', async () => {
    const d = desk();
    d.becomeIdle();
    let called = 0;
    d.whenQuietIdle(() => called++, 400);
    for (let i = 0; i < 8; i++) {
      d.output('spinner');
      await sleep(80);
    }
    expect(called).toBe(1);
  });

  it('a person who typed meanwhile is there: nothing is called', async () => {
    const d = desk();
    d.becomeIdle();
    let called = 0;
    d.output('frame');
    d.whenQuietIdle(() => called++, 3000);
    d.busy();
    await sleep(600);
    expect(called).toBe(0);
  });
});
