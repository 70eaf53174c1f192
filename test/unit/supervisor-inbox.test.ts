import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  enqueue,
  type InboxMessage,
  inboxDirs,
  pendingCount,
  takePending,
} from '../../src/supervisor/inbox.js';
import { tempDir } from '../helpers/git-repo.js';
import { expectNoProcessesLeft, killTagged, newTestTag } from '../helpers/processes.js';

const PROJECT = fileURLToPath(new URL('../..', import.meta.url));
const WORKER = fileURLToPath(new URL('./fixtures/inbox-worker.ts', import.meta.url));
const tag = newTestTag();

const dirs: string[] = [];
afterEach(async () => {
  // Workers first: one still taking (after a failed assertion) would write into a folder being removed.
  killTagged(tag);
  await expectNoProcessesLeft(tag);
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
function runDir(): string {
  const dir = tempDir('agentbox-inbox-');
  dirs.push(dir);
  return dir;
}

describe('the inbox', () => {
  it('gives the messages back in the order they were queued, with their ids', () => {
    const dir = runDir();
    const texts = ['first', 'second\nwith a newline', '"quoted" and ünicode ☕', '', 'last'];
    const ids = texts.map((t) => enqueue(dir, t));
    expect(new Set(ids).size).toBe(texts.length);
    expect(takePending(dir)).toEqual(texts.map((text, i) => ({ id: ids[i], text })));
  });

  it('keeps the order of many messages queued in the same millisecond', () => {
    const dir = runDir();
    const texts = Array.from({ length: 300 }, (_, i) => `message ${i}`);
    for (const t of texts) enqueue(dir, t);
    expect(takePending(dir).map((m) => m.text)).toEqual(texts);
  });

  it('delivers each message exactly once: a second take is empty', () => {
    const dir = runDir();
    enqueue(dir, 'a');
    enqueue(dir, 'b');
    expect(takePending(dir).map((m) => m.text)).toEqual(['a', 'b']);
    expect(takePending(dir)).toEqual([]);
    enqueue(dir, 'c');
    expect(takePending(dir).map((m) => m.text)).toEqual(['c']);
    expect(takePending(dir)).toEqual([]);
    // Taken messages are moved, not deleted: what was delivered stays readable.
    const { pending, delivered } = inboxDirs(dir);
    expect(fs.readdirSync(pending)).toEqual([]);
    expect(fs.readdirSync(delivered)).toHaveLength(3);
  });

  it('counts pending messages', () => {
    const dir = runDir();
    expect(pendingCount(dir)).toBe(0);
    enqueue(dir, 'a');
    enqueue(dir, 'b');
    enqueue(dir, 'c');
    expect(pendingCount(dir)).toBe(3);
    takePending(dir);
    expect(pendingCount(dir)).toBe(0);
  });

  it('reads a run with no inbox as empty', () => {
    const dir = runDir();
    expect(takePending(dir)).toEqual([]);
    expect(pendingCount(dir)).toBe(0);
    expect(takePending(path.join(dir, 'no-such-run'))).toEqual([]);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('ignores a message still being written (its temp file)', () => {
    const dir = runDir();
    enqueue(dir, 'a');
    const { pending } = inboxDirs(dir);
    fs.writeFileSync(path.join(pending, '.000-half.tmp'), '{"id":');
    expect(pendingCount(dir)).toBe(1);
    expect(takePending(dir).map((m) => m.text)).toEqual(['a']);
    expect(fs.readdirSync(pending)).toEqual(['.000-half.tmp']);
  });
});

interface RoundResult {
  readonly round: number;
  readonly start: number;
  readonly end: number;
  readonly taken: InboxMessage[];
}

interface Worker {
  readonly child: ChildProcess;
  /** The worker's next JSON line. */
  next(): Promise<RoundResult>;
  readonly done: Promise<{ code: number | null; stderr: string }>;
}

function startWorker(dir: string, goDir: string, rounds: number): Worker {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER, dir, goDir, String(rounds)], {
    cwd: PROJECT,
    env: { ...process.env, AGENTBOX_TEST_TAG: tag },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
  let buffer = '';
  let stderr = '';
  const lines: string[] = [];
  const waiting: ((line: string | null) => void)[] = [];
  let closed = false;
  const push = (line: string | null) => {
    const waiter = waiting.shift();
    if (waiter) waiter(line);
    else if (line !== null) lines.push(line);
  };
  child.stdout?.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    for (let at = buffer.indexOf('\n'); at >= 0; at = buffer.indexOf('\n')) {
      push(buffer.slice(0, at));
      buffer = buffer.slice(at + 1);
    }
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const done = new Promise<{ code: number | null; stderr: string }>((resolve) => {
    child.on('close', (code) => {
      clearTimeout(timer);
      closed = true;
      while (waiting.length) push(null);
      resolve({ code, stderr });
    });
  });
  const line = () =>
    new Promise<string>((resolve, reject) => {
      const take = (l: string | null) =>
        l === null ? reject(new Error(`worker ended early:\n${stderr}`)) : resolve(l);
      const queued = lines.shift();
      if (queued !== undefined) take(queued);
      else if (closed) take(null);
      else waiting.push(take);
    });
  const ready = line().then((l) => expect(l).toBe('ready'));
  return {
    child,
    next: async () => {
      await ready;
      return JSON.parse(await line()) as RoundResult;
    },
    done,
  };
}

describe('the inbox across real processes', () => {
  it('8 processes taking 200 queued messages at once: each message taken by exactly one', async () => {
    const WORKERS = 8;
    const MESSAGES = 200;
    const ROUNDS = 6;
    const dir = runDir();
    const goDir = runDir();
    const workers = Array.from({ length: WORKERS }, () => startWorker(dir, goDir, ROUNDS));
    let racedRounds = 0;
    const delivered: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const texts = Array.from({ length: MESSAGES }, (_, i) => `round ${round} message ${i}`);
      const ids = texts.map((t) => enqueue(dir, t));
      expect(pendingCount(dir)).toBe(MESSAGES);
      fs.writeFileSync(path.join(goDir, `go-${round}`), '');
      const results = await Promise.all(workers.map((w) => w.next()));
      expect(results.every((r) => r.round === round)).toBe(true);

      const taken = results.flatMap((r) => r.taken);
      // None lost, none twice, none invented; the text that goes with each id is intact.
      expect(taken).toHaveLength(MESSAGES);
      expect(new Set(taken.map((m) => m.id)).size).toBe(MESSAGES);
      expect([...taken].sort((a, b) => a.id.localeCompare(b.id))).toEqual(
        ids.map((id, i) => ({ id, text: texts[i] })),
      );
      // What each process took, it took oldest first.
      for (const r of results) {
        const order = r.taken.map((m) => ids.indexOf(m.id));
        expect(order).toEqual([...order].sort((a, b) => a - b));
      }
      expect(pendingCount(dir)).toBe(0);
      delivered.push(...ids);
      // Proof of a real race: more than one process took messages from the same batch.
      if (results.filter((r) => r.taken.length > 0).length > 1) racedRounds++;
    }
    expect(racedRounds).toBeGreaterThan(0);
    const { pending, delivered: deliveredDir } = inboxDirs(dir);
    expect(fs.readdirSync(pending)).toEqual([]);
    expect(fs.readdirSync(deliveredDir).sort()).toEqual(delivered.map((id) => `${id}.json`).sort());

    const exits = await Promise.all(workers.map((w) => w.done));
    for (const e of exits) expect(e, e.stderr).toMatchObject({ code: 0, stderr: '' });
    await expectNoProcessesLeft(tag);
  }, 120_000);
});
