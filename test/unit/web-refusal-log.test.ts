import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ensureLedger, openLedger } from '../../src/ledger/index.js';
import { UiRefusalLog } from '../../src/web/refusal-log.js';
import { gitRepo } from '../helpers/git-repo.js';

const lines = (file: string) =>
  fs
    .readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));

describe('UiRefusalLog: the UI server refusals, in .agents/ui/events.jsonl', () => {
  it('writes each refusal; the same one within a minute is counted and the count goes with its next line', () => {
    const repo = gitRepo();
    ensureLedger(repo.dir);
    let now = 1_000_000;
    const log = new UiRefusalLog(openLedger(repo.dir), () => now);
    const stale = { status: 401, reason: 'no token', method: 'GET', path: '/api/events' };
    log.record(stale);
    for (let i = 0; i < 5; i++) {
      now += 1000;
      log.record(stale);
    }
    log.record({ status: 403, reason: 'foreign Host "evil.example"', method: 'POST', path: '/api/runs' });
    expect(lines(log.file).map((e) => [e.event, e.status, e.repeated])).toEqual([
      ['ui_refused', 401, undefined],
      ['ui_refused', 403, undefined],
    ]);
    now += 60_000;
    log.record(stale);
    expect(lines(log.file).at(-1)).toMatchObject({ ...stale, event: 'ui_refused', repeated: 5 });
    expect(log.file).toBe(`${repo.dir}/.agents/ui/events.jsonl`);
  });
});
