import { randomBytes } from 'node:crypto';
import fs from 'node:fs';

/** A tag for AGENTBOX_TEST_TAG: every process started with it in its env can be found later. */
export function newTestTag(): string {
  return `abtest-${randomBytes(8).toString('hex')}`;
}

/**
 * Live processes (other than this one) whose environment has `name=value`. The environment is
 * inherited, so this finds grandchildren too, even those that left the process group or session
 * (Claude Code's Bash tool does). Zombies have no readable environ and are skipped.
 */
export function processesWithEnv(name: string, value: string): { pid: number; cmdline: string }[] {
  const needle = `${name}=${value}`;
  const found: { pid: number; cmdline: string }[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      if (!environ.includes(needle)) continue;
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
      found.push({ pid, cmdline });
    } catch {
      // The process ended while we looked, or is not ours to read.
    }
  }
  return found;
}

/**
 * Live processes of a test: started with AGENTBOX_TEST_TAG=<tag> in their environment, or started
 * by agentbox under AGENTBOX_LINEAGE=<tag> (which agentbox passes to every process it starts, also
 * those whose environment it otherwise empties, like the supervisor's `claude -p`).
 */
export function processesWithTag(tag: string): { pid: number; cmdline: string }[] {
  const found = new Map<number, { pid: number; cmdline: string }>();
  for (const p of [
    ...processesWithEnv('AGENTBOX_TEST_TAG', tag),
    ...processesWithEnv('AGENTBOX_LINEAGE', tag),
  ]) {
    found.set(p.pid, p);
  }
  return [...found.values()];
}

/** SIGKILLs every process `processesWithEnv` finds. */
export function killWithEnv(name: string, value: string): void {
  for (const { pid } of processesWithEnv(name, value)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

/** Waits up to `waitMs` for every tagged process to end, then throws naming the survivors. */
export async function expectNoProcessesLeft(tag: string, waitMs = 3000): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const left = processesWithTag(tag);
    if (left.length === 0) return;
    if (Date.now() >= deadline) {
      const list = left.map((p) => `  ${p.pid} ${p.cmdline}`).join('\n');
      throw new Error(`${left.length} process(es) tagged ${tag} still running after ${waitMs} ms:\n${list}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Safety net for afterAll: SIGKILL every tagged process. */
export function killTagged(tag: string): void {
  killWithEnv('AGENTBOX_TEST_TAG', tag);
  killWithEnv('AGENTBOX_LINEAGE', tag);
}
