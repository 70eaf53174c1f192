import { execFile, spawnSync } from 'node:child_process';
import which from 'which';

/** The environment the sandbox code reads (PATH, HOME, TMPDIR); passed in, never read from process.env. */
export type SandboxEnv = Readonly<Record<string, string | undefined>>;

export type SandboxProbe =
  | { readonly ok: true; readonly detail: string }
  | { readonly ok: false; readonly problem: string; readonly fix: string };

/** `name` on `PATH` (the same lookup as for the claude binary), or null. */
function onPath(name: string, env: SandboxEnv): string | null {
  // NOTE: with an empty path `which` falls back to the current directory; no PATH means not found.
  return env.PATH ? which.sync(name, { nothrow: true, path: env.PATH }) : null;
}

/** A bubblewrap that worked, by PATH, and when: the checks of one command ask more than once. */
const worked = new Map<string, number>();

/** How long a bubblewrap that worked is taken to work still (a long-lived `agentbox ui` asks again after). */
const WORKED_FOR_MS = 60_000;

/** bwrap's trial: a namespace like the sandbox's, running `true`. */
const BWRAP_TRIAL = ['--ro-bind', '/', '/', '--dev', '/dev', '--unshare-net', '--unshare-pid', '--', 'true'];

/** What needs no process: the platform and the binaries. `{ bwrap }`: the trial is still to run. */
function beforeTrial(
  env: SandboxEnv,
  platform: NodeJS.Platform,
): SandboxProbe | { readonly bwrap: string; readonly key: string } {
  if (platform === 'darwin') {
    return onPath('sandbox-exec', env)
      ? { ok: true, detail: 'Seatbelt (sandbox-exec)' }
      : { ok: false, problem: 'sandbox-exec was not found', fix: 'it ships with macOS: check PATH' };
  }
  if (platform !== 'linux') {
    return {
      ok: false,
      problem: `Claude Code has no sandbox on ${platform}`,
      fix: 'run fix runs on Linux or macOS, or opt out in agentbox.yaml (sandbox.mode: off) where the machine itself is the sandbox',
    };
  }
  const missing = ['bwrap', 'socat'].filter((name) => !onPath(name, env));
  if (missing.length > 0) {
    const packages = missing.map((m) => (m === 'bwrap' ? 'bubblewrap' : m)).join(' ');
    return {
      ok: false,
      problem: `${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not installed`,
      fix: `install ${packages} (Debian/Ubuntu: sudo apt-get install ${packages}; Fedora: sudo dnf install ${packages})`,
    };
  }
  const bwrap = onPath('bwrap', env)!;
  const key = `${bwrap}\0${env.PATH}`;
  // A success is kept a minute (`agentbox revise` checked twice, a blocking spawn each); a failure
  // is tried again every time.
  if (Date.now() - (worked.get(key) ?? Number.NEGATIVE_INFINITY) < WORKED_FOR_MS)
    return { ok: true, detail: 'bubblewrap + socat' };
  return { bwrap, key };
}

/** The trial's outcome: its exit status and what it said. */
function afterTrial(key: string, status: number | null, why: string | undefined): SandboxProbe {
  if (status === 0) {
    worked.set(key, Date.now());
    return { ok: true, detail: 'bubblewrap + socat' };
  }
  return { ok: false, ...bwrapFailure(status, why) };
}

/**
 * What bubblewrap says when the kernel will not let this user make namespaces: "No permissions to
 * create new namespace" (user namespaces off), "setting up uid map: Permission denied" (AppArmor's
 * restriction, Ubuntu 24.04+), "Creating new namespace failed" (a seccomp or container policy).
 */
const NO_NAMESPACES =
  /No permissions to create new namespace|setting up uid map: Permission denied|Creating new namespace failed/i;

/**
 * A failed trial in words: bubblewrap's own first line, and the fix it calls for — user namespaces
 * only when that is what it said; anything else (a `true` it cannot run, a timeout) gets a next step
 * that sends the person to bubblewrap's message. Pure.
 */
export function bwrapFailure(
  status: number | null,
  why: string | undefined,
): { readonly problem: string; readonly fix: string } {
  const said = (why || `exit ${status}`).trim().split('\n')[0] ?? '';
  const problem = `bubblewrap cannot create a sandbox here: ${said}`;
  if (NO_NAMESPACES.test(why ?? ''))
    return {
      problem,
      fix: 'allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu 24.04+ kernel.apparmor_restrict_unprivileged_userns=0), or run inside a container started with them',
    };
  return {
    problem,
    fix: `fix what bubblewrap says above (see it whole: bwrap ${BWRAP_TRIAL.join(' ')}), then run agentbox doctor again`,
  };
}

/**
 * Whether Claude Code's sandbox can work here: on Linux, bubblewrap and socat on PATH and a kernel
 * that lets this user create the namespaces bubblewrap needs (tried for real: ~5 ms); on macOS,
 * sandbox-exec. Anything else has no sandbox.
 */
export function probeSandbox(env: SandboxEnv, platform: NodeJS.Platform = process.platform): SandboxProbe {
  const first = beforeTrial(env, platform);
  if (!('bwrap' in first)) return first;
  const tried = spawnSync(first.bwrap, BWRAP_TRIAL, {
    env: { PATH: env.PATH ?? '' },
    encoding: 'utf8',
    timeout: 10_000,
  });
  return afterTrial(first.key, tried.status, tried.stderr || tried.error?.message);
}

/**
 * probeSandbox without holding the event loop while bubblewrap runs: a run's start tries the
 * sandbox while it reads its configuration (the trial was 5-25 ms before claude could start).
 * Never rejects.
 */
export function probeSandboxAsync(
  env: SandboxEnv,
  platform: NodeJS.Platform = process.platform,
): Promise<SandboxProbe> {
  const first = beforeTrial(env, platform);
  if (!('bwrap' in first)) return Promise.resolve(first);
  return new Promise((resolve) => {
    execFile(
      first.bwrap,
      BWRAP_TRIAL,
      { env: { PATH: env.PATH ?? '' }, encoding: 'utf8', timeout: 10_000 },
      (error, _stdout, stderr) => {
        const status = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve(afterTrial(first.key, status, stderr || error?.message));
      },
    );
  });
}

/**
 * Whether `runs.verify` can run in the sandbox: Anthropic's sandbox runtime (srt) also needs
 * ripgrep on Linux (measured with 0.0.83). Only asked when the sandbox itself works.
 */
export function probeVerifySandbox(
  env: SandboxEnv,
  platform: NodeJS.Platform = process.platform,
): SandboxProbe {
  if (platform !== 'linux') return { ok: true, detail: 'the sandbox runtime can run it' };
  if (!onPath('rg', env))
    return {
      ok: false,
      problem: 'ripgrep (rg) is not installed, which the sandbox runtime that runs runs.verify needs',
      fix: 'install ripgrep (Debian/Ubuntu: sudo apt-get install ripgrep; Fedora: sudo dnf install ripgrep)',
    };
  // (it finds bwrap, socat, rg and the shell with the `which` program: without it, "bubblewrap
  // (bwrap) not installed" though it is, measured with @anthropic-ai/sandbox-runtime 0.0.83)
  if (!onPath('which', env))
    return {
      ok: false,
      problem:
        'the `which` command is not installed, which the sandbox runtime that runs runs.verify needs to find bwrap, socat and the shell',
      fix: 'install it (Fedora: sudo dnf install which; Arch: sudo pacman -S which; Alpine: apk add which)',
    };
  return { ok: true, detail: 'the sandbox runtime can run it' };
}
