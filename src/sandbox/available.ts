import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Env } from '../cli/context.js';

export type SandboxProbe =
  | { readonly ok: true; readonly detail: string }
  | { readonly ok: false; readonly problem: string; readonly fix: string };

/** `name` on `PATH`, or null. */
function onPath(name: string, env: Env): string | null {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const file = path.join(dir, name);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return file;
    } catch {
      // Not here.
    }
  }
  return null;
}

/**
 * Whether Claude Code's sandbox can work here: on Linux, bubblewrap and socat on PATH and a kernel
 * that lets this user create the namespaces bubblewrap needs (tried for real: ~5 ms); on macOS,
 * sandbox-exec. Anything else has no sandbox.
 */
export function probeSandbox(env: Env, platform: NodeJS.Platform = process.platform): SandboxProbe {
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
  const tried = spawnSync(
    onPath('bwrap', env)!,
    ['--ro-bind', '/', '/', '--dev', '/dev', '--unshare-net', '--unshare-pid', '--', 'true'],
    { env: { PATH: env.PATH ?? '' }, encoding: 'utf8', timeout: 10_000 },
  );
  if (tried.status !== 0) {
    const why = (tried.stderr || tried.error?.message || `exit ${tried.status}`).trim().split('\n')[0];
    return {
      ok: false,
      problem: `bubblewrap cannot create a sandbox here: ${why}`,
      fix: 'allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu 24.04+ kernel.apparmor_restrict_unprivileged_userns=0), or run inside a container started with them',
    };
  }
  return { ok: true, detail: 'bubblewrap + socat' };
}
