import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { agentboxStateDir } from '../util/state-dir.js';
import { MAX_SOCKET_PATH, residentDir, socketName } from './protocol.js';

/*
 * Where a build's resident socket is, and whether that place is the person's alone. Both ends check:
 * the server before it listens, the client before it connects (a socket in a folder someone else
 * could write is not the person's resident agentbox).
 */

/** The socket of this build of agentbox; null when its path is too long for a Unix socket. */
export function socketPath(
  env: Readonly<Record<string, string | undefined>>,
  packageRoot: string,
  version: string,
): { readonly dir: string; readonly file: string } | null {
  const dir = residentDir(agentboxStateDir(env));
  const root = path.resolve(packageRoot);
  let builtAt: number;
  try {
    builtAt = Math.floor(fs.statSync(path.join(root, 'dist', 'cli', 'main.cjs')).mtimeMs);
  } catch {
    // Not built (a run from the sources): no resident agentbox for it.
    return null;
  }
  const file = path.join(dir, socketName(root, version, builtAt));
  return Buffer.byteLength(file) > MAX_SOCKET_PATH ? null : { dir, file };
}

/** Why `dir` is not the person's private folder (a real folder, theirs, 0700), or null when it is. */
export function privateDirProblem(dir: string, uid: number | undefined = process.getuid?.()): string | null {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(dir);
  } catch {
    return `${dir} does not exist`;
  }
  if (!stat.isDirectory()) return `${dir} is not a folder (a link or a file)`;
  if (uid !== undefined && stat.uid !== uid)
    return `${dir} belongs to uid ${stat.uid}, not to you (uid ${uid})`;
  if ((stat.mode & 0o077) !== 0)
    return `${dir} is open to others (mode ${(stat.mode & 0o777).toString(8)}; it must be 700)`;
  return null;
}

/** Whether a server answers on the socket `file` (a dead one's socket refuses). */
export function answers(file: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.connect(file);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}
