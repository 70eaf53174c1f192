import fs from 'node:fs';
import path from 'node:path';
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

describe('UiRefusalLog under a flood', () => {
  it('a page that asks for a new path each time (a refusal each) writes at most 100 lines a minute; the rest are counted', () => {
    // Any page the browser opens may send requests to 127.0.0.1:<port> (an <img>, a no-cors fetch):
    // each is refused (401, no token) and each path is a new refusal. It must not fill the disk.
    const repo = gitRepo();
    ensureLedger(repo.dir);
    let now = 1_000_000;
    const log = new UiRefusalLog(openLedger(repo.dir), () => now);
    for (let i = 0; i < 5000; i++) {
      log.record({ status: 401, reason: 'missing or wrong token', method: 'GET', path: `/x${i}` });
      if (i % 100 === 0) now += 500;
    }
    expect(lines(log.file).length).toBeLessThanOrEqual(100);
    now += 60_000;
    log.record({ status: 401, reason: 'missing or wrong token', method: 'GET', path: '/after' });
    const last = lines(log.file).at(-1);
    expect(last).toMatchObject({ path: '/after', unlogged: expect.any(Number) });
    expect(lines(log.file).length - 1 + last.unlogged).toBe(5000);
  });
});

describe('UiRefusalLog: a line stays small, the file stops growing', () => {
  it('a 16 KB path or reason is cut to 200 characters, the cut said (each line was up to 16 KB: 2.3 GB a day)', () => {
    const repo = gitRepo();
    ensureLedger(repo.dir);
    let now = 1_000_000;
    const log = new UiRefusalLog(openLedger(repo.dir), () => now);
    for (let i = 0; i < 150; i++) {
      log.record({
        status: 401,
        reason: `Host ${'h'.repeat(16_000)}`,
        method: 'GET',
        path: `/${i}${'a'.repeat(16_000)}`,
      });
      now += 1000;
    }
    const written = lines(log.file);
    expect(written.length).toBeGreaterThan(50);
    for (const line of written) {
      expect(line.path.length).toBeLessThanOrEqual(230);
      expect(line.path).toMatch(/… \(16\d{3} characters\)$/);
      expect(line.reason.length).toBeLessThanOrEqual(230);
    }
    expect(fs.statSync(log.file).size).toBeLessThan(150 * 700);
  });

  it('past 16 MB nothing more is written; refusals are counted', () => {
    const repo = gitRepo();
    ensureLedger(repo.dir);
    let now = 1_000_000;
    const log = new UiRefusalLog(openLedger(repo.dir), () => now);
    fs.mkdirSync(path.dirname(log.file), { recursive: true });
    fs.writeFileSync(log.file, `${'x'.repeat(16 * 1024 * 1024)}\n`);
    const before = fs.statSync(log.file).size;
    for (let i = 0; i < 10; i++) {
      log.record({ status: 401, reason: 'missing or wrong token', method: 'GET', path: `/x${i}` });
      now += 61_000;
    }
    expect(fs.statSync(log.file).size).toBe(before);
  });
});
