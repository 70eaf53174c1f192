/** A ledger of many finished runs, written with the ledger's own serializers (shared by benchmarks). */
import fs from 'node:fs';
import path from 'node:path';
import {
  applyStatePatch,
  foldIndex,
  type IndexEvent,
  listRunNames,
  makeIndexEvent,
  openLedger,
  type RunStatus,
  renderIndexMd,
  setLatest,
} from '../src/ledger/index.js';
import { serializeIndexEvent } from '../src/ledger/index-log.js';
import { buildMeta, serializeMeta } from '../src/ledger/meta.js';
import { formatRunName, slugify } from '../src/ledger/names.js';
import { initialState, serializeState } from '../src/ledger/state.js';
import { RUN_TYPES } from '../src/ledger/types.js';

const ENDINGS: RunStatus[] = [
  'DONE',
  'REVIEW',
  'MERGED',
  'CRASHED',
  'DONE',
  'DISCARDED',
  'ABORTED',
  'STALLED',
];
const TASKS = [
  'why is db latency high?',
  'optimize auth middleware',
  'fix "a; rm -rf ~" in the login form',
  'Révise la façade du cache',
  'plan the migration to the new queue',
];
export const ENVELOPE = {
  model: 'claude-sonnet-4-5',
  tools_allowlist: ['Read', 'Grep', 'Glob'],
  safe_commands: [],
  human_only_commands: [],
};

/** Writes `count` runs with the ledger's own serializers: the bytes createRun/updateState write. */
export function writeRuns(repoRoot: string, count: number): void {
  const ledger = openLedger(repoRoot);
  const base = Date.UTC(2025, 0, 1);
  const index: string[] = [];
  const events: IndexEvent[] = [];
  for (let i = 0; i < count; i++) {
    // 47 s apart: most minutes hold one run, some two (exercises the same-minute ordering).
    const now = new Date(base + i * 47_000);
    const type = RUN_TYPES[i % RUN_TYPES.length]!;
    const task = `${TASKS[i % TASKS.length]} #${i}`;
    const slug = slugify(task, type);
    const id = (0x100000 + i).toString(16).slice(-6);
    const name = formatRunName(now, slug, id);
    const dir = path.join(ledger.runsDir, name);
    fs.mkdirSync(path.join(dir, 'raw'), { recursive: true });
    const meta = buildMeta({
      name,
      id,
      slug,
      type,
      task,
      envelope: ENVELOPE,
      repoRoot,
      repoShaStart: null,
      now,
    });
    fs.writeFileSync(path.join(dir, 'meta.yaml'), serializeMeta(meta), { flag: 'wx' });
    let state = initialState(meta, now, null);
    const created = makeIndexEvent(meta, state, 'created', undefined, now);
    const status = ENDINGS[i % ENDINGS.length]!;
    const end = new Date(now.getTime() + 30_000);
    const failure = ['CRASHED', 'ABORTED', 'STALLED'].includes(status)
      ? { kind: 'crashed' as const, message: 'claude exited with code 1' }
      : null;
    state = applyStatePatch(state, { status, failure, tool_calls: i % 40 }, end);
    fs.writeFileSync(path.join(dir, 'state.json'), serializeState(state));
    if (status === 'DONE') fs.writeFileSync(path.join(dir, 'report.md'), `# ${task}\n`);
    const ended = makeIndexEvent(meta, state, status.toLowerCase(), failure?.message, end);
    index.push(serializeIndexEvent(created), serializeIndexEvent(ended));
    events.push(created, ended);
  }
  fs.writeFileSync(ledger.indexJsonl, index.join(''));
  fs.writeFileSync(ledger.indexMd, renderIndexMd(foldIndex(events)));
  const last = listRunNames(ledger)[0];
  if (last) setLatest(ledger, last);
}
