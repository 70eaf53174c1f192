import { printable } from '../../endpoint/refuse-network.js';
import type { EventLog } from '../../ledger/events.js';
import { LogSample } from './log-sample.js';

const PER_STATUS = { first: 20, every: 100, thinAfter: 10_000, later: 10_000, keys: 1, overflow: '' };

/**
 * What the run's endpoint refused (a request without the run's token, a bad body, a handler that
 * failed), logged as `endpoint_problem`. The agent reaches the endpoint through the sandbox's proxy
 * bridge (localhost:3128 is the endpoint itself): a loop there wrote a line per request, each with
 * a path of its choosing (3,000 with 4 KB paths: ~6 MB, sent in 1 s). So each status's first 20
 * are logged, then every 100th with its count up to its 10,000th (120 lines), then every 10,000th;
 * the path and reason cut short.
 */
export function endpointProblems(
  log: Pick<EventLog, 'append'>,
): (problem: { readonly status: number; readonly reason: string; readonly path: string }) => void {
  // One sample per status (the server's few, never the client's words): a flood of one status
  // does not hide the first of another (a hook call whose body broke, a handler that failed).
  const samples = new Map<number, LogSample>();
  return ({ status, reason, path }) => {
    const sample = samples.get(status) ?? new LogSample(PER_STATUS);
    samples.set(status, sample);
    const { count, write } = sample.take('');
    if (!write) return;
    log.append({
      event: 'endpoint_problem',
      status,
      reason: reason.slice(0, 300),
      path: printable(path.slice(0, 200)),
      count,
    });
  };
}
