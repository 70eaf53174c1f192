import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunState } from '../../src/ledger/types.js';
import { EVENTS_FILE, eventsAfter, writeRunFiles } from '../../src/remote/run-files.js';

/*
 * A fetch replaces a fetched run's events.jsonl by a new file renamed over it. A line this machine
 * appends in between (a `merge` refused while `fetch` runs) went to the file renamed away, and was
 * lost; now it follows the new file's lines.
 */
const line = (event: string) => `${JSON.stringify({ ts: '2026-11-29T00:00:00Z', event })}\n`;
const PUBLISHED = line('started') + line('stop');
const MINE = line('merge_refused');
const LATE = line('human_gate_refused');

let dir: string;
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function runFolder(): { file: string; before: RunState } {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentbox-events-race-'));
  const file = path.join(dir, EVENTS_FILE);
  fs.writeFileSync(file, PUBLISHED + MINE);
  const before = { publication: { events_bytes: Buffer.byteLength(PUBLISHED) } } as unknown as RunState;
  return { file, before };
}

describe("a fetched run's events.jsonl replaced while this machine appends to it", () => {
  it('a line appended between the read and the rename follows the new publication’s lines', () => {
    const { file, before } = runFolder();
    const next = Buffer.from(PUBLISHED + line('finished'));
    const events = eventsAfter(dir, next, before);
    fs.appendFileSync(file, LATE);
    try {
      expect(writeRunFiles(dir, new Map([[EVENTS_FILE, events.bytes]]), false)).toBeNull();
    } finally {
      events.settle();
    }
    expect(fs.readFileSync(file, 'utf8')).toBe(next.toString() + MINE + LATE);
    // Where the publication's bytes end is unchanged: the next fetch keeps MINE and LATE.
    expect(events.own).toBe(next.length);
  });

  it('when the new file could not be written, the old one keeps every line, once', () => {
    const { file, before } = runFolder();
    fs.mkdirSync(path.join(dir, 'report.md'));
    const events = eventsAfter(dir, Buffer.from(PUBLISHED), before);
    fs.appendFileSync(file, LATE);
    const files = new Map([
      [EVENTS_FILE, events.bytes],
      ['report.md', Buffer.from('# a file where this machine has a folder\n')],
    ]);
    try {
      expect(writeRunFiles(dir, files, false)).toMatch(/could not be written/);
    } finally {
      events.settle();
    }
    expect(fs.readFileSync(file, 'utf8')).toBe(PUBLISHED + MINE + LATE);
  });
});

describe('a staging folder left by a fetch that was killed half way', () => {
  it('goes at the next update of the run; one of a fetch still running stays', () => {
    const { before } = runFolder();
    const dead = spawnSync('true').pid!;
    fs.mkdirSync(path.join(dir, `.fetch-${dead}-abc123`, 'raw'), { recursive: true });
    fs.writeFileSync(path.join(dir, `state.json.fetch-${dead}`), '{}');
    fs.mkdirSync(path.join(dir, `.fetch-${process.ppid}-def456`));
    const events = eventsAfter(dir, Buffer.from(PUBLISHED), before);
    try {
      expect(writeRunFiles(dir, new Map([[EVENTS_FILE, events.bytes]]), false)).toBeNull();
    } finally {
      events.settle();
    }
    expect(fs.readdirSync(dir).filter((n) => n.startsWith('.fetch-'))).toEqual([
      `.fetch-${process.ppid}-def456`,
    ]);
  });
});
