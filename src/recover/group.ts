import fs from 'node:fs';
import path from 'node:path';
import type { CommandContext } from '../context.js';
import { AgentboxError, errnoCode, fsError } from '../errors.js';
import { setMember } from '../group/attempt.js';
import { runGroup, type TakeUp } from '../group/run.js';
import { type GroupDetails, groupDir, readGroup, updateGroupState } from '../group/store.js';
import { EventLog } from '../ledger/events.js';
import { reactivated, runIdOf, updateState } from '../ledger/index.js';
import { isAlive, processStartTime } from '../process/reap.js';
import type { RunContext } from '../run/begin/context.js';
import { checkContinue } from '../run/continue.js';
import { terminalText } from '../util/terminal-text.js';
import type { RecoveryAction } from './decide.js';
import { endOrphanOf, readyReplay } from './recover.js';

/*
 * A group taken up again — by `agentbox resume <group>` or `agentbox recover` — in ONE process, as
 * it ran (src/group/run.ts): its stopped or crashed attempts go on (resumed, or replayed when their
 * session cannot go on), those that never started start, those that ended REVIEW or DONE are left.
 */

/** What becomes of one attempt. */
export interface AttemptPlan {
  readonly attempt: number;
  readonly run: string | null;
  readonly action: 'start' | 'resume' | 'replay' | 'leave';
  readonly reason: string;
  /** Its run was made but the group's state does not name it (its process died between): recorded first. */
  readonly adopt?: boolean;
  /** resume / replay: the decision carried out. */
  readonly recovery?: Extract<RecoveryAction, { kind: 'resume' | 'rollback_replay' }>;
}

/** The group, if it can be taken up: not decided by the gate, its process gone. */
export function takeableGroup(rc: RunContext, name: string, command: string): GroupDetails {
  const group = readGroup(rc.ledger, name);
  const { status, pid, pid_start } = group.state;
  const id = group.meta.group_id;
  if (status === 'MERGED' || status === 'DISCARDED') {
    throw new AgentboxError('USAGE', `group ${name} is ${status}: nothing of it can go on`, {
      hint: 'start a new group for more work: agentbox fix "<task>" --attempts N',
    });
  }
  if (status === 'ACTIVE' && isAlive(pid, pid_start)) {
    throw new AgentboxError('USAGE', `group ${name} is still running (pid ${pid})`, {
      hint: `follow it: agentbox watch ${id} · stop it first: agentbox stop ${id}, then agentbox ${command} ${id}`,
    });
  }
  return group;
}

const LOCK = 'take-up.lock';

/**
 * Runs `fn` holding the group's take-up lock (`take-up.lock` in its folder, made exclusively): two
 * `recover`s, or a `recover` and a `resume`, never plan and start the same attempts twice. Once the
 * group runs, its state says so (ACTIVE, a live pid) and takeableGroup refuses the rest anyway; the
 * lock covers the moments before. A lock whose process is gone is taken over.
 */
export async function withGroupLock<T>(rc: RunContext, name: string, fn: () => Promise<T>): Promise<T> {
  const file = path.join(groupDir(rc.ledger, name), LOCK);
  const mine = JSON.stringify({ pid: process.pid, pid_start: processStartTime(process.pid) });
  if (!tryLock(file, mine)) {
    const holder = lockHolder(file);
    if (holder && isAlive(holder.pid, holder.pid_start)) {
      throw new AgentboxError(
        'USAGE',
        `group ${name} is being taken up by another agentbox (pid ${holder.pid})`,
        {
          hint: `follow it: agentbox watch ${runIdOf(name)}`,
        },
      );
    }
    fs.rmSync(file, { force: true });
    if (!tryLock(file, mine))
      throw new AgentboxError('USAGE', `group ${name} is being taken up by another agentbox`, {
        hint: `follow it: agentbox watch ${runIdOf(name)}`,
      });
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(file, { force: true });
  }
}

function tryLock(file: string, text: string): boolean {
  try {
    fs.writeFileSync(file, text, { flag: 'wx' });
    return true;
  } catch (error) {
    if (errnoCode(error) === 'EEXIST') return false;
    throw fsError(error, 'create', file);
  }
}

function lockHolder(file: string): { pid: number; pid_start: string | null } | null {
  try {
    const raw = JSON.parse(fs.readFileSync(file, 'utf8')) as { pid?: unknown; pid_start?: unknown };
    return typeof raw.pid === 'number'
      ? { pid: raw.pid, pid_start: typeof raw.pid_start === 'string' ? raw.pid_start : null }
      : null;
  } catch {
    return null;
  }
}

/** Plans for the attempts (in order) as lines a person reads. Pure. */
export function planLines(plans: readonly AttemptPlan[]): string {
  return plans
    .map(
      (p) =>
        `  attempt ${p.attempt}${p.run ? ` (${runIdOf(p.run)})` : ''}: ${p.action} — ${terminalText(p.reason)}\n`,
    )
    .join('');
}

export interface TakeUpOptions {
  readonly json: boolean;
  readonly force: boolean;
  readonly more?: string;
  /** The command, for the hint of a refusal (`agentbox resume <id>`). */
  readonly command: string;
  readonly by: 'resume' | 'recover';
}

/**
 * Carries the plans out in this process: every run to go on is checked first (its envelope), then
 * made ACTIVE here, then the group runs them and starts the waiting ones (when planned).
 */
export async function takeUpGroup(
  ctx: CommandContext,
  rc: RunContext,
  group: GroupDetails,
  plans: readonly AttemptPlan[],
  options: TakeUpOptions,
): Promise<number> {
  // A run made for an attempt and never recorded is the attempt's from now (before it goes on).
  for (const p of plans) if (p.adopt && p.run) await setMember(rc, group, p.attempt, { run: p.run });
  const going = plans.filter((p) => p.run && p.recovery);
  for (const p of going) if (p.recovery!.kind === 'resume') checkContinue(ctx, rc, p.run!, options);
  const resume = new Map<string, TakeUp>();
  for (const p of going) resume.set(p.run!, await readyRun(ctx, rc, p, options));
  const startWaiting = plans.some((p) => p.action === 'start');
  // A person taking the whole group up lifts an earlier stop; a crash recovered keeps its halt.
  if (options.by === 'resume' && startWaiting)
    await updateGroupState(rc.ledger, group.name, () => ({ halted: null }));
  new EventLog(group.dir).append({
    event: options.by,
    attempts: plans.map((p) => ({ attempt: p.attempt, run: p.run, action: p.action, reason: p.reason })),
  });
  return runGroup(ctx, rc, group.name, {
    json: options.json,
    resume,
    startWaiting,
  });
}

/** One attempt's run made ACTIVE in this process, resumed in its session or readied for a replay. */
async function readyRun(
  ctx: CommandContext,
  rc: RunContext,
  plan: AttemptPlan,
  options: TakeUpOptions,
): Promise<TakeUp> {
  const name = plan.run!;
  const action = plan.recovery!;
  await endOrphanOf(rc, name);
  if (action.kind === 'rollback_replay')
    return { replay: { note: await readyReplay(rc, name, action, options.more) } };
  const detail = checkContinue(ctx, rc, name, {
    command: options.command,
    detail: `${options.by === 'recover' ? 'resume: ' : ''}${action.reason}`,
    force: options.force,
  });
  await updateState(rc.ledger, name, reactivated(), {
    event: options.by,
    ...(detail.length > 0 ? { detail: detail.join('; ') } : {}),
  });
  return options.more === undefined ? {} : { more: options.more };
}
