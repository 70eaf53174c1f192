import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createGroup, updateGroupState } from '../../src/group/store.js';
import { createRun, type Ledger, type RunHandle, updateState } from '../../src/ledger/index.js';
import { ENVELOPE } from '../unit/fixtures/ledger.js';
import type { TestRepo } from './git-repo.js';

/*
 * A hostile remote for tests (test/unit/remote-hostile*.test.ts): runs and groups as agentbox
 * leaves them, and what anyone who can push to the remote makes by hand with git's plumbing.
 */

/** How a fixRun ends: its status, runs.verify's outcome, its events.jsonl lines, and $0.42 spent. */
export interface RunEnd {
  readonly status: 'REVIEW' | 'ABORTED';
  readonly verified: boolean | null;
  readonly events?: readonly string[];
}

/**
 * A fix run in `repo` that changed src/app.ts, with its changes.patch and report: REVIEW, or
 * ended as `end` says (with its verification, failure and cost).
 */
export async function fixRun(repo: TestRepo, ledger: Ledger, task: string, end?: RunEnd) {
  const run = await changedRun(repo, ledger, task, `export const x = '${task}';\n`);
  fs.writeFileSync(path.join(run.dir, 'report.md'), `# ${task}\ndone\n`);
  const events = end?.events ?? ['{"event":"Stop"}'];
  fs.writeFileSync(path.join(run.dir, 'events.jsonl'), `${events.join('\n')}\n`);
  if (!end) {
    await updateState(ledger, run, { status: 'REVIEW' });
    return run;
  }
  await updateState(ledger, run, {
    status: end.status,
    ...(end.status === 'ABORTED'
      ? { failure: { kind: 'agent_abort', message: 'runs.verify failed three times; gave up' } }
      : {}),
    output: { template: null, applied: false, violations: 0, corrections: 0, verified: end.verified },
    usage: { agent: spend(0.42), supervisor: spend(0) },
  });
  return run;
}

/** A fix run created in `ledger` whose changes.patch sets src/app.ts to `content` (the tree left clean). */
async function changedRun(
  repo: TestRepo,
  ledger: Ledger,
  task: string,
  content: string,
  options?: Parameters<typeof createRun>[1]['options'],
): Promise<RunHandle> {
  const run = await createRun(ledger, {
    type: 'fix',
    task,
    envelope: ENVELOPE,
    repoShaStart: repo.git('rev-parse', 'HEAD').trim(),
    pid: process.pid,
    now: new Date('2026-03-01T10:00:00Z'),
    ...(options ? { options } : {}),
  });
  repo.write('src/app.ts', content);
  fs.writeFileSync(path.join(run.dir, 'changes.patch'), repo.git('diff'));
  repo.git('checkout', '--quiet', '--', '.');
  return run;
}

function spend(cost: number) {
  return {
    input_tokens: 10,
    output_tokens: 10,
    cache_read_input_tokens: 0,
    cache_creation_input_tokens: 0,
    cost_usd: cost,
    estimated: false,
    turns: 1,
    duration_ms: 1000,
    calls: 1,
  };
}

/** A group of two finished fix attempts, as its process leaves it. */
export async function fixGroup(repo: TestRepo, ledger: Ledger, task: string) {
  const base = repo.git('rev-parse', 'HEAD').trim();
  const now = new Date('2026-03-01T10:00:00Z');
  const runOptions = { timeout_ms: 60_000, supervisor: 'rules', max_iterations: 50, model: null } as const;
  const g = { task, attempts: 2, models: null, maxParallel: 2, firstPass: false, maxCostUsd: null };
  const group = await createGroup(ledger, { ...g, repoShaStart: base, runOptions, now });
  const runs: RunHandle[] = [];
  for (const attempt of [1, 2]) {
    const of = { id: group.meta.group_id, name: group.name, attempt, attempts: 2 };
    const run = await changedRun(repo, ledger, task, `export const x = ${attempt};\n`, { group: of });
    await updateState(ledger, run, { status: 'REVIEW' });
    runs.push(run);
  }
  await updateGroupState(ledger, group.name, (s) => ({
    status: 'ENDED',
    members: s.members.map((m, i) => ({ ...m, run: runs[i]!.name })),
  }));
  return { group, runs };
}

export type Entry = [mode: string, name: string, id: string];

/** What a stranger with push access does by hand: trees of any shape, commits, forced pushes. */
export function forge(repo: TestRepo) {
  const g = (input: string | Buffer, args: string[], env: NodeJS.ProcessEnv = process.env) =>
    execFileSync('git', args, { cwd: repo.dir, input, encoding: 'utf8', env }).trim();
  const blob = (data: string | Buffer) => g(data, ['hash-object', '-w', '--stdin']);
  const tree = (entries: Entry[]) =>
    g(
      Buffer.concat(
        entries
          .sort(([, a], [, b]) => (a < b ? -1 : 1))
          .map(([mode, name, id]) =>
            Buffer.concat([Buffer.from(`${mode} ${name}\0`), Buffer.from(id, 'hex')]),
          ),
      ),
      ['hash-object', '-t', 'tree', '--literally', '-w', '--stdin'],
    );
  const commit = (t: string, env?: NodeJS.ProcessEnv) => g('hostile\n', ['commit-tree', t, '-F', '-'], env);
  const push = (object: string, ref: string) =>
    g('', ['push', '--quiet', '--force', 'origin', `${object}:${ref}`]);
  /** A run folder's own files as tree entries, some replaced or added. */
  const runEntries = (dir: string, replace: Record<string, string | Buffer> = {}): Entry[] => {
    const files: Record<string, string | Buffer> = {};
    for (const f of ['meta.yaml', 'state.json', 'changes.patch', 'report.md', 'events.jsonl'])
      files[f] = fs.readFileSync(path.join(dir, f));
    Object.assign(files, replace);
    return Object.entries(files).map(([name, data]) => ['100644', name, blob(data)]);
  };
  /** Publishes `entries` as the run's publication. */
  const publish = (run: string, entries: Entry[]) => push(commit(tree(entries)), `refs/agentbox/runs/${run}`);
  return { g, blob, tree, commit, push, runEntries, publish };
}

export const sha256 = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');
export const lines = (file: string) => fs.readFileSync(file, 'utf8').trim().split('\n');
export const events = (file: string) => lines(file).map((l) => JSON.parse(l).event as string);
