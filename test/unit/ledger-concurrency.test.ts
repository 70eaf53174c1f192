import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { readRun, readState } from '../../src/ledger/index.js';
import { parseIndexLine } from '../../src/ledger/index-log.js';
import { parseState } from '../../src/ledger/state.js';
import { expectNoProcessesLeft, killTagged, newTestTag } from '../helpers/processes.js';
import { create, ledgerRepo } from './fixtures/ledger.js';

const PROJECT = fileURLToPath(new URL('../..', import.meta.url));
const WORKER = fileURLToPath(new URL('./fixtures/ledger-worker.ts', import.meta.url));
const tag = newTestTag();
afterAll(() => killTagged(tag));

interface Worker {
  readonly child: ChildProcess;
  readonly ready: Promise<void>;
  readonly done: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

function startWorker(args: string[]): Worker {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER, ...args], {
    cwd: PROJECT,
    env: { ...process.env, AGENTBOX_TEST_TAG: tag },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.startsWith('ready\n')) resolve();
    });
    child.on('exit', () => reject(new Error(`worker exited before it was ready:\n${stderr}`)));
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
  ready.catch(() => undefined);
  return { child, ready, done };
}

/** The worker's result line (the one after "ready"). */
function resultOf(stdout: string): Record<string, unknown> {
  return JSON.parse(stdout.split('\n').filter(Boolean).at(-1)!);
}

describe('the ledger across real processes', () => {
  it('20 processes creating runs in the same second get distinct names and ids, and a whole index', async () => {
    const { ledger } = ledgerRepo();
    const go = path.join(ledger.root, 'go');
    const now = '2025-11-22T14:30:07.000Z';
    // Half share a task (same slug: names collide), half differ (ids collide under other names);
    // most draw ids from a tiny pool so that both collisions really happen.
    const workers = Array.from({ length: 20 }, (_, i) =>
      startWorker([
        'create',
        ledger.root,
        go,
        '3',
        i % 2 ? 'same task' : `task ${i}`,
        now,
        i < 16 ? 'small' : 'random',
      ]),
    );
    await Promise.all(workers.map((w) => w.ready));
    fs.writeFileSync(go, '');
    const results = await Promise.all(workers.map((w) => w.done));
    for (const r of results) expect(r, r.stderr).toMatchObject({ code: 0, stderr: '' });

    const names = results.flatMap((r) => resultOf(r.stdout).names as string[]);
    expect(names).toHaveLength(60);
    expect(new Set(names).size).toBe(60);
    expect(new Set(names.map((n) => n.slice(-6))).size).toBe(60);
    // No folder left over from a backed-off claim.
    expect(fs.readdirSync(ledger.runsDir).sort()).toEqual([...names].sort());
    for (const name of names) {
      const run = readRun(ledger, name);
      expect(run.meta.run_id).toBe(name.slice(-6));
      expect(run.state?.status).toBe('ACTIVE');
    }

    const lines = fs.readFileSync(ledger.indexJsonl, 'utf8').split('\n');
    expect(lines.pop()).toBe('');
    const events = lines.map((line) => parseIndexLine(line));
    expect(events.every((e) => e !== null && e.event === 'created')).toBe(true);
    expect(events.map((e) => e?.run).sort()).toEqual([...names].sort());

    const md = fs.readFileSync(ledger.indexMd, 'utf8');
    for (const name of names) expect(md).toContain(`[${name}](runs/${name}/)`);
    expect(names).toContain(path.basename(fs.readlinkSync(ledger.latest)));
    expect(
      fs.readdirSync(ledger.dir).filter((f) => f.includes('.tmp-') || f.startsWith('INDEX.md.')),
    ).toEqual([]);
    await expectNoProcessesLeft(tag);
  }, 120_000);

  it('state.json always parses while another process hammers updates', async () => {
    const { ledger } = ledgerRepo();
    const run = await create(ledger, 'hammered', '2025-11-22T14:30:00Z');
    const go = path.join(ledger.root, 'go');
    const worker = startWorker(['update', ledger.root, go, run.name, '400']);
    await worker.ready;
    let finished = false;
    void worker.done.then(() => {
      finished = true;
    });
    fs.writeFileSync(go, '');
    const file = path.join(run.dir, 'state.json');
    const seen = new Set<number>();
    let reads = 0;
    while (!finished) {
      const state = parseState(fs.readFileSync(file, 'utf8'), file);
      seen.add(state.tool_calls);
      reads++;
      await new Promise((resolve) => setImmediate(resolve));
    }
    const result = await worker.done;
    expect(result, result.stderr).toMatchObject({ code: 0, stderr: '' });
    // Proof that the reads overlapped the writes rather than running before or after them.
    expect(seen.size).toBeGreaterThan(5);
    expect(reads).toBeGreaterThan(20);
    expect(readState(run.dir)).toMatchObject({ tool_calls: 400, status: 'ACTIVE' });
    const events = fs.readFileSync(ledger.indexJsonl, 'utf8').trimEnd().split('\n').map(parseIndexLine);
    expect(events.every((e) => e !== null)).toBe(true);
    // created + one event per status change (every 10th update changes it: 40 changes).
    expect(events).toHaveLength(41);
    expect(fs.readdirSync(run.dir).sort()).toEqual(['meta.yaml', 'raw', 'state.json']);
    await expectNoProcessesLeft(tag);
  }, 120_000);
});
