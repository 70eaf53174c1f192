// Desktop notifications: a run that ended, an interactive session that waits for its person.
import { api } from './api.js';
import { toast } from './dom.js';

const ENDED = new Set(['REVIEW', 'DONE', 'CRASHED', 'ABORTED', 'FAILED']);

/** Each run's status as last seen, to tell what changed since. */
let known = new Map();

export async function enableNotifications() {
  if (!('Notification' in window)) return toast('this browser has no notifications');
  toast(
    (await Notification.requestPermission()) === 'granted' ? 'you will be notified' : 'notifications are off',
  );
}

export async function notifyEnded() {
  try {
    const { runs } = await api('GET', '/api/runs?limit=50');
    const granted = window.Notification?.permission === 'granted';
    for (const run of runs) {
      const before = known.get(run.name);
      if (before?.status === 'ACTIVE' && ENDED.has(run.status) && granted)
        new Notification(`agentbox: ${run.status}`, { body: run.task, tag: run.name });
      // An interactive session whose claude finished its turn: it waits for the person.
      if (before && !before.waiting && run.now?.waiting && granted)
        new Notification('agentbox: waits for you', { body: run.task, tag: `${run.name}-waiting` });
    }
    known = new Map(runs.map((r) => [r.name, { status: r.status, waiting: Boolean(r.now?.waiting) }]));
  } catch {
    /* the next change tries again */
  }
}
