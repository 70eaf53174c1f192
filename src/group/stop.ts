import { AgentboxError } from '../errors.js';
import { STOP_SIGNAL } from '../gate/signals.js';
import { EventLog } from '../ledger/events.js';
import type { Ledger } from '../ledger/paths.js';
import { isAlive, isRecordedProcess } from '../process/reap.js';
import { catchesSignal } from '../process/signals.js';
import { readGroup } from './store.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `agentbox stop <group>`: the group's process is asked as a run's is (STOP_SIGNAL): every attempt
 * that runs ends as a stopped run does, and none that waits will start. Returns once the group has
 * ended; with `force`, its process is killed after `graceMs` (recover then accounts for each attempt).
 */
export async function stopGroup(
  ledger: Ledger,
  name: string,
  options: { force?: boolean; graceMs?: number; waitMs?: number },
): Promise<'ended' | 'killed' | 'gone'> {
  const group = readGroup(ledger, name);
  const { pid, pid_start } = group.state;
  if (group.state.status !== 'ACTIVE' || !isRecordedProcess(pid, pid_start)) {
    throw new AgentboxError('USAGE', `group ${name} is not running (${group.state.status})`, {
      hint: `see it with agentbox show ${group.meta.group_id}`,
    });
  }
  new EventLog(group.dir).append({ event: 'stop_requested', by: 'agentbox stop', pid });
  const ready = Date.now() + 10_000;
  while (catchesSignal(pid!, STOP_SIGNAL) === false && Date.now() < ready) await sleep(50);
  process.kill(pid!, STOP_SIGNAL);
  const deadline = Date.now() + (options.waitMs ?? 120_000);
  const killAt = Date.now() + (options.graceMs ?? 10_000);
  for (;;) {
    if (readGroup(ledger, name).state.status !== 'ACTIVE') return 'ended';
    if (!isAlive(pid, pid_start)) return 'gone';
    if (options.force && Date.now() > killAt) {
      process.kill(pid!, 'SIGKILL');
      return 'killed';
    }
    if (Date.now() > deadline) {
      throw new AgentboxError('IO_FAILED', `group ${name} did not stop in time`, {
        hint: `force it: agentbox stop ${group.meta.group_id} --force`,
      });
    }
    await sleep(200);
  }
}
