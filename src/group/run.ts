import type { CommandContext } from '../context.js';
import { EventLog } from '../ledger/events.js';
import { runCost } from '../ledger/index-log.js';
import { readState } from '../ledger/state.js';
import { ownerPid } from '../process/owner.js';
import { processStartTime } from '../process/reap.js';
import type { RunContext } from '../run/begin/context.js';
import type { Finalized } from '../run/end/finalize.js';
import { terminalJson } from '../util/json-out.js';
import { createAttempt, executeAttempt, type Running, readAttemptRun, setMember } from './attempt.js';
import { attemptEndLine, groupEndLines } from './lines.js';
import { keepAttemptPatch } from './patches.js';
import { writeGroupReport } from './report.js';
import { takeStopRequest } from './stop-request.js';
import { type GroupDetails, readGroup, updateGroupState } from './store.js';
import type { GroupHalt } from './types.js';

/** How often the group looks for stop requests and adds up its cost. */
const LOOK_MS = 500;

export interface GroupRunHow {
  readonly json: boolean;
  /** Runs of attempts to take up again (resume, recover): in their session, or replayed in a new one. */
  readonly resume?: ReadonlyMap<string, TakeUp>;
  /** false: attempts that never started stay so (`resume <attempt>` takes up that one only). */
  readonly startWaiting?: boolean;
}

/** How an attempt's run is taken up again: its session resumed (`more`: extra instructions), or replayed. */
export type TakeUp = { readonly more?: string } | { readonly replay: { readonly note: string } };

/**
 * Runs a group's attempts in this one process: at most max_parallel at once, the rest in order as
 * places free up, each a whole run of its own (src/run/execute.ts). Stops them all on Ctrl-C or
 * `agentbox stop <group>`, one on `agentbox stop <attempt>`, the others once one passes with
 * --first-pass, and every one once the group's cost passes --max-cost.
 */
export async function runGroup(
  ctx: CommandContext,
  rc: RunContext,
  name: string,
  how: GroupRunHow,
): Promise<number> {
  let group = readGroup(rc.ledger, name);
  const log = new EventLog(group.dir);
  group = { ...group, state: await claim(rc, group) };
  const s = new Scheduler(ctx, rc, group, log, how);
  const off = ctx.onInterrupt?.((by) =>
    s.haltAll({ reason: 'stopped', detail: `stopped by ${by}`, at: now() }),
  );
  const look = setInterval(() => s.look(), LOOK_MS);
  try {
    await s.run();
  } finally {
    clearInterval(look);
    off?.();
  }
  const ended = await updateGroupState(rc.ledger, name, (st) => ({
    status: st.status === 'ACTIVE' ? 'ENDED' : st.status,
    ended_at: now(),
    halted: s.halted ?? st.halted,
  }));
  log.append({ event: 'group_ended', halted: s.halted?.reason ?? null });
  try {
    await writeGroupReport(rc.ledger, name);
  } catch (error) {
    // The ranking is for the person to read; its failure must not change how the group ended.
    log.append({ event: 'report_failed', error: error instanceof Error ? error.message : String(error) });
  }
  const final = { ...group, state: ended };
  if (how.json) ctx.io.out(`${terminalJson(s.summary(final))}\n`);
  else ctx.io.out(groupEndLines(rc.ledger, final, s.halted));
  return s.anyPassed() ? 0 : 1;
}

const now = () => new Date().toISOString();

/** The group is this process's from now: ACTIVE, its pid, no crash; a halt of an earlier process is kept. */
function claim(rc: RunContext, group: GroupDetails) {
  return updateGroupState(rc.ledger, group.name, () => ({
    status: 'ACTIVE',
    pid: ownerPid(),
    pid_start: processStartTime(ownerPid()),
    ended_at: null,
    crashed: null,
  }));
}

class Scheduler {
  halted: GroupHalt | null = null;
  private readonly running = new Map<number, Running>();
  private readonly ended = new Map<number, Finalized>();
  private readonly queue: number[];
  /** Each attempt's cost so far: those run by an earlier process from their state.json, the rest as they spend. */
  private readonly costs = new Map<number, number>();

  constructor(
    private readonly ctx: CommandContext,
    private readonly rc: RunContext,
    private group: GroupDetails,
    private readonly log: EventLog,
    private readonly how: GroupRunHow,
  ) {
    const resume = how.resume ?? new Map();
    // An attempt that could not start (no run) waits as one that never started: a take-up that
    // starts the waiting ones (recover) tries it again.
    this.queue = group.state.members
      .filter((m) => (m.run === null ? how.startWaiting !== false : resume.has(m.run)))
      .map((m) => m.attempt);
    for (const m of group.state.members)
      if (m.run) this.costs.set(m.attempt, runCost(readState(`${rc.ledger.runsDir}/${m.run}`)?.usage) ?? 0);
  }

  async run(): Promise<void> {
    while (this.queue.length > 0 || this.running.size > 0) {
      while (!this.halted && this.queue.length > 0 && this.running.size < this.group.meta.max_parallel)
        await this.launch(this.queue.shift()!);
      if (this.halted) this.queue.length = 0;
      if (this.running.size === 0) continue;
      const [k, done] = await Promise.race(
        [...this.running].map(([k, r]) =>
          r.done.then(
            (d) => [k, d] as const,
            () => [k, null] as const,
          ),
        ),
      );
      this.running.delete(k);
      if (done) await this.attemptEnded(k, done);
    }
  }

  private async launch(k: number): Promise<void> {
    const member = this.group.state.members[k - 1]!;
    const resume = member.run ? this.how.resume?.get(member.run) : undefined;
    let name = member.run;
    try {
      name ??= await createAttempt(this.ctx, this.rc, this.group, k);
      const run = readAttemptRun(this.rc, name);
      const handle = executeAttempt(this.ctx, this.rc, k, run, {
        ...(!resume ? {} : 'replay' in resume ? { replay: resume.replay } : { resume }),
        onSpend: (usd) => this.spent(k, usd),
      });
      // NOTE: a failed attempt is its run's to record (CRASHED, its report); the group goes on.
      handle.done.catch((error) => this.attemptFailed(k, error));
      this.running.set(k, handle);
      this.log.append({
        event: 'attempt_started',
        attempt: k,
        run: name,
        ...(resume ? { resumed: true } : {}),
      });
      this.line(
        `attempt ${k}/${this.group.meta.attempts} ${resume ? 'resumed' : 'started'}: ${name}${member.model ? ` (${member.model})` : ''}\n`,
      );
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (!name) await setMember(this.rc, this.group, k, { error: message });
      this.log.append({ event: 'attempt_not_started', attempt: k, error: message });
      this.line(`attempt ${k}/${this.group.meta.attempts} could not start: ${message}\n`);
    }
  }

  private attemptFailed(k: number, error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    this.log.append({ event: 'attempt_failed', attempt: k, error: message });
    this.line(`attempt ${k}/${this.group.meta.attempts} failed: ${message}\n`);
  }

  private async attemptEnded(k: number, done: Finalized): Promise<void> {
    this.ended.set(k, done);
    const dir = this.group.dir;
    const runDir = `${this.rc.ledger.runsDir}/${done.name}`;
    try {
      await keepAttemptPatch(this.rc.ledger, this.group.name, k, runDir);
    } catch (error) {
      this.log.append({ event: 'patch_not_kept', attempt: k, error: (error as Error).message });
    }
    const state = readState(runDir);
    const passed = state?.output?.verified === true && done.status === 'REVIEW';
    this.log.append({ event: 'attempt_ended', attempt: k, run: done.name, status: done.status, passed, dir });
    this.line(attemptEndLine(k, this.group.meta.attempts, done, state));
    if (passed && this.group.meta.first_pass && !this.halted)
      this.haltAll({ reason: 'first_pass', detail: `attempt ${k} passed runs.verify`, at: now() });
  }

  /** Every attempt that runs is stopped, and none that waits will start. */
  haltAll(halt: GroupHalt): void {
    if (this.halted) return;
    this.halted = halt;
    this.queue.length = 0;
    this.log.append({ event: 'group_halted', reason: halt.reason, detail: halt.detail });
    void updateGroupState(this.rc.ledger, this.group.name, () => ({ halted: halt })).catch(() => {});
    for (const r of this.running.values()) {
      if (halt.reason === 'budget') r.halt({ kind: 'aborted', reason: halt.detail, failure: 'budget' });
      else r.stop(halt.detail.replace(/^stopped by /, ''));
    }
  }

  /** Stop requests for one attempt. */
  look(): void {
    for (const r of this.running.values()) {
      const by = takeStopRequest(r.dir);
      if (by) {
        this.log.append({ event: 'attempt_stop_requested', attempt: r.attempt, by });
        r.stop(by);
      }
    }
  }

  /**
   * Attempt k has now cost `usd` in all: the group's budget is checked at once, as a run's own is,
   * so no attempt spends on after the group's total passed it.
   */
  private spent(k: number, usd: number): void {
    this.costs.set(k, usd);
    const max = this.group.meta.max_cost_usd;
    if (max === null || this.halted) return;
    const cost = [...this.costs.values()].reduce((a, b) => a + b, 0);
    if (cost > max)
      this.haltAll({
        reason: 'budget',
        detail: `the group has cost $${cost.toFixed(4)}, past its budget of $${max.toFixed(4)}`,
        at: now(),
      });
  }

  anyPassed(): boolean {
    return [...this.ended.values()].some((d) => d.status === 'REVIEW' || d.status === 'DONE');
  }

  summary(group: GroupDetails) {
    return {
      group: group.name,
      id: group.meta.group_id,
      halted: this.halted,
      attempts: group.state.members.map((m) => {
        const d = [...this.ended.values()].find((e) => e.name === m.run);
        return {
          attempt: m.attempt,
          run: m.run,
          model: m.model,
          status: d?.status ?? null,
          error: m.error ?? null,
        };
      }),
    };
  }

  private line(text: string): void {
    if (!this.how.json) this.ctx.io.out(text);
  }
}
