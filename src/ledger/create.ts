import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { AgentboxError, errnoCode, fsError } from '../errors.js';
import { markActive } from './active.js';
import { appendIndexEvent, makeIndexEvent } from './index-log.js';
import { regenerateIndexMd } from './index-md.js';
import { setLatest } from './links.js';
import { buildMeta, loadYaml, writeMetaOnce } from './meta.js';
import { formatRunName, RUN_ID_RE, slugify } from './names.js';
import { type Ledger, notInitialized } from './paths.js';
import { initialState } from './state.js';
import { writeFirstState } from './state-write.js';
import { type Envelope, RUN_TYPES, type RunMeta, type RunState, type RunType } from './types.js';

export interface CreateRunInput {
  readonly type: RunType;
  readonly task: string;
  /**
   * What the run may do. A function when the envelope depends on the run itself (its slash
   * commands are named after its id, its deny rules name its folder): called once the name is
   * claimed, before meta.yaml is written.
   */
  readonly envelope:
    | Envelope
    | ((run: { readonly id: string; readonly name: string; readonly dir: string }) => Envelope);
  readonly repoShaStart: string | null;
  /** How the run was started; recorded in meta.yaml (see RunMeta.options). */
  readonly options?: Readonly<Record<string, unknown>>;
  /** The run this one reruns (`agentbox rerun`): meta.yaml `rerun_of`. */
  readonly rerunOf?: string;
  /** Start time; names the run. Default: now. */
  readonly now?: Date;
  /** The supervising process, recorded in state.json. Default: null. */
  readonly pid?: number | null;
  /** Source of short ids; tests pass a small pool to force collisions. Default: crypto random. */
  readonly randomId?: () => string;
  /**
   * false: INDEX.md is left to the caller (regenerateIndexMd), which writes it once claude has
   * started (a foreground run: 10-60 ms off the way to claude). Default: written here.
   */
  readonly dashboard?: boolean;
}

export interface RunHandle {
  readonly name: string;
  readonly id: string;
  readonly dir: string;
  readonly meta: RunMeta;
  readonly state: RunState;
}

export const CLAIM_ATTEMPTS = 16;

export function randomRunId(): string {
  return randomBytes(3).toString('hex');
}

/**
 * Claims `runs/<name>` for a fresh id. NOTE: two guarantees, both needed with many processes in
 * the same second. The non-recursive mkdir fails with EEXIST if the name is taken. The id must
 * also be unique across the ledger (it names slash commands) even with a different slug or minute:
 * after our mkdir we look for another folder with our id and back off if there is one. Of two
 * racers at least the later one sees the other, so both can never keep the same id.
 */
function claimRunFolder(ledger: Ledger, now: Date, slug: string, nextId: () => string): string {
  for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
    const id = nextId();
    if (!RUN_ID_RE.test(id))
      throw new Error(`run id source returned ${JSON.stringify(id)}, not 6 hex characters`);
    const name = formatRunName(now, slug, id);
    const dir = path.join(ledger.runsDir, name);
    try {
      fs.mkdirSync(dir);
    } catch (error) {
      if (errnoCode(error) === 'EEXIST') continue;
      if (errnoCode(error) === 'ENOENT') throw notInitialized(ledger.root);
      throw fsError(error, 'create the run folder', dir);
    }
    const suffix = `__${id}`;
    // A group's id (src/group/) is taken too: a short id names one thing in the ledger.
    if (
      fs.readdirSync(ledger.runsDir).some((other) => other !== name && other.endsWith(suffix)) ||
      groupHas(ledger, suffix)
    ) {
      fs.rmdirSync(dir);
      continue;
    }
    return name;
  }
  throw new AgentboxError(
    'IO_FAILED',
    `could not claim a free run name in ${ledger.runsDir} after ${CLAIM_ATTEMPTS} attempts`,
    { hint: 'this needs a very full ledger or a broken random source; run the command again' },
  );
}

function groupHas(ledger: Ledger, suffix: string): boolean {
  try {
    return fs.readdirSync(path.join(ledger.dir, 'groups')).some((other) => other.endsWith(suffix));
  } catch {
    return false;
  }
}

/**
 * Creates a run: its folder with raw/, meta.yaml (once), state.json (ACTIVE), a `created` event
 * in INDEX.jsonl, a fresh INDEX.md (unless `dashboard` is false), and `latest` pointing at it.
 */
export async function createRun(ledger: Ledger, input: CreateRunInput): Promise<RunHandle> {
  if (!RUN_TYPES.includes(input.type)) throw new Error(`unknown run type ${JSON.stringify(input.type)}`);
  const now = input.now ?? new Date();
  const slug = slugify(input.task, input.type);
  const name = claimRunFolder(ledger, now, slug, input.randomId ?? randomRunId);
  const id = name.slice(-6);
  const dir = path.join(ledger.runsDir, name);
  try {
    fs.mkdirSync(path.join(dir, 'raw'));
  } catch (error) {
    throw fsError(error, 'create the folder', path.join(dir, 'raw'));
  }
  const meta = buildMeta({
    name,
    id,
    slug,
    type: input.type,
    task: input.task,
    envelope: typeof input.envelope === 'function' ? input.envelope({ id, name, dir }) : input.envelope,
    repoRoot: ledger.root,
    repoShaStart: input.repoShaStart,
    now,
    ...(input.options === undefined ? {} : { options: input.options }),
    ...(input.rerunOf === undefined ? {} : { rerunOf: input.rerunOf }),
  });
  await loadYaml();
  writeMetaOnce(dir, meta);
  const state = initialState(meta, now, input.pid ?? null);
  markActive(ledger, name);
  writeFirstState(dir, state);
  appendIndexEvent(ledger, makeIndexEvent(meta, state, 'created', undefined, now));
  if (input.dashboard !== false) await regenerateIndexMd(ledger);
  setLatest(ledger, name);
  return { name, id, dir, meta, state };
}
