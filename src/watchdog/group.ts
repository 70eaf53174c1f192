import { EventLog } from '../ledger/events.js';
import type { Ledger } from '../ledger/paths.js';
import { isAlive } from '../process/reap.js';

/**
 * A group whose process is gone while its state says ACTIVE: marked ENDED with `crashed`, so the
 * group shows as CRASHED (groupStatus) until `agentbox recover` takes it up. The watchdog comes
 * here when it marks one of the group's attempts CRASHED (every running attempt names the group's
 * process), so its cost stays that of the ACTIVE runs. NOTE: a group that died with no attempt
 * running has no marker to find it by; groupStatus shows it CRASHED all the same (its pid is dead)
 * and recover finds it by its state. Returns the group's name when it was marked here.
 */
export async function markGroupCrashed(ledger: Ledger, groupId: string): Promise<string | null> {
  const { findGroup } = await import('../group/resolve.js');
  const { groupDir, updateGroupState } = await import('../group/store.js');
  const name = findGroup(ledger, groupId);
  if (!name) return null;
  let detail = '';
  await updateGroupState(ledger, name, (current) => {
    if (current.status !== 'ACTIVE' || isAlive(current.pid, current.pid_start)) return null;
    detail = `the group's process (pid ${current.pid ?? '?'}) is gone`;
    const at = new Date().toISOString();
    return { status: 'ENDED', ended_at: at, crashed: { detail, at } };
  });
  if (!detail) return null;
  new EventLog(groupDir(ledger, name)).append({ event: 'watchdog', action: 'crashed', detail });
  return name;
}
