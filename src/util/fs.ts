import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { AgentboxError, errnoCode, fsError } from '../errors.js';

/*
 * The one way agentbox replaces a file: a temp file in the same folder, then a rename, so a
 * reader sees the old bytes or the new ones, never half. Append-only logs and exclusive creates
 * (`wx`) are written directly.
 */

/**
 * Writes one of agentbox's own files (the ledger, a run's records, a cache) atomically: readers see
 * old or new, never half, and the bytes are on disk before the rename. The rename replaces what is
 * at `file` itself: a link there is replaced, never followed. The replaced file's mode is kept
 * unless `mode` is given.
 * NOTE: not write-file-atomic (the person's own files keep it: writePersonFile): its realpath of
 * every component and its exit handlers per write cost ~1.0 ms of CPU against ~0.4 ms here (300
 * writes each), ~4 ms of a run's end.
 */
export async function writeAtomic(file: string, data: string | Buffer, mode?: number): Promise<void> {
  const temp = tempBeside(file);
  let made = false;
  try {
    const keep = mode ?? regularFileMode(file);
    const handle = await fs.promises.open(temp, 'wx', keep ?? 0o666);
    made = true;
    try {
      // (open's mode passes through the umask; a kept or given one must not)
      if (keep !== undefined) await handle.chmod(keep);
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.promises.rename(temp, file);
  } catch (error) {
    if (made) await fs.promises.rm(temp, { force: true }).catch(() => {});
    throw fsError(error, 'write', file);
  }
}

/** A temp file's name beside `file`, this process's and random: written with `wx`, renamed or removed. */
function tempBeside(file: string): string {
  return `${file}.${process.pid}-${randomBytes(6).toString('hex')}.tmp`;
}

/** The permission bits of the regular file at `file` (a link is not followed), or undefined. */
function regularFileMode(file: string): number | undefined {
  try {
    const stat = fs.lstatSync(file);
    return stat.isFile() ? stat.mode & 0o7777 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Writes a file of the person's (their configuration, a template they edit in the web UI)
 * atomically, as their editor would: a link is followed to the file it names (a dotfiles
 * repository's), whose mode and owner are kept (write-file-atomic).
 */
export async function writePersonFile(file: string, data: string): Promise<void> {
  try {
    await writeFileAtomic(file, data);
  } catch (error) {
    throw fsError(error, 'write', file);
  }
}

/** writeAtomic for code that cannot wait (init's transaction, a queued message). */
export function writeAtomicSync(file: string, data: string | Buffer, mode?: number): void {
  try {
    writeFileAtomic.sync(file, data, mode === undefined ? {} : { mode });
  } catch (error) {
    throw fsError(error, 'write', file);
  }
}

/**
 * A file that lives only while a run runs (its slash commands, its secrets, its private git's
 * config), written as writeAtomic writes agentbox's own files (readers see old or new, a link at
 * the path is replaced, never followed, a replaced file's mode kept unless `mode` is given), but
 * without waiting for the disk (no fsync): after a crash the run is started again and writes them
 * anew. On a busy disk the run's six such flushes took 2-18 ms before claude could start.
 */
export function writeScratchSync(file: string, data: string | Buffer, mode?: number): void {
  const temp = tempBeside(file);
  let made = false;
  try {
    const keep = mode ?? regularFileMode(file);
    const fd = fs.openSync(temp, 'wx', keep ?? 0o666);
    made = true;
    try {
      if (keep !== undefined) fs.fchmodSync(fd, keep);
      fs.writeFileSync(fd, data);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(temp, file);
  } catch (error) {
    if (made) rmQuietly(temp);
    throw fsError(error, 'write', file);
  }
}

/**
 * Writes `file` whole only if nothing is there yet: the temp file is hard-linked into place, and
 * a link never replaces a name. false: the file exists (someone wrote it first; it is kept).
 */
export function createAtomicSync(file: string, data: string | Buffer): boolean {
  const temp = tempBeside(file);
  try {
    fs.writeFileSync(temp, data, { flag: 'wx' });
    fs.linkSync(temp, file);
    return true;
  } catch (error) {
    if (errnoCode(error) === 'EEXIST') return false;
    throw fsError(error, 'write', file);
  } finally {
    rmQuietly(temp);
  }
}

/** NOTE: `force` forgives only ENOENT; under a parent that is not a folder rmSync throws ENOTDIR. */
function rmQuietly(file: string): void {
  try {
    fs.rmSync(file, { force: true });
  } catch {
    // Nothing could have been made there.
  }
}

/**
 * The file's text, or undefined when it does not exist. Only a regular file is read (a link to one
 * is followed; see notAFile); anything else, or more than `max` bytes, throws, as other failures do.
 */
export function readTextIfExists(file: string, max?: number): string | undefined {
  let fd: number;
  try {
    // A link is followed (a dotfile manager links the person's config); O_NONBLOCK: a FIFO does
    // not block the open, and fstat refuses it below.
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT' || errnoCode(error) === 'ENOTDIR') return undefined;
    throw fsError(error, 'read', file);
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) throw notAFile(file);
    if (max !== undefined && stat.size > max) {
      throw new AgentboxError('IO_FAILED', `${file} is ${stat.size} bytes: more than the ${max} read of it`, {
        hint: `look at it (ls -l ${file}); a file this size is not one agentbox wrote or expects`,
      });
    }
    return fs.readFileSync(fd, 'utf8');
  } finally {
    fs.closeSync(fd);
  }
}

/** At most this much of a configuration file, a template or a settings file is read. */
export const MAX_CONFIG_BYTES = 1024 * 1024;

/**
 * readTextIfExists for a file a repository carries (its agentbox.yaml, `.claude/` settings,
 * `.mcp.json`): a link that leads out of `root` is refused. A cloned repository's
 * `.mcp.json -> ~/.ssh/id_rsa` (or `-> /proc/self/environ`, the process's secrets) was read and
 * shown for review by `agentbox trust`, into the terminal and a CI job's log. A broken link reads
 * as no file, as git's checkout of it would.
 */
export function readRepoText(file: string, root: string, max = MAX_CONFIG_BYTES): string | undefined {
  let real: string;
  try {
    real = fs.realpathSync(file);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT' || errnoCode(error) === 'ENOTDIR') return undefined;
    throw fsError(error, 'read', file);
  }
  if (!inRepositoryTree(file, real, root)) {
    throw new AgentboxError(
      'IO_FAILED',
      `${file} is a link out of the repository (to ${real}), so agentbox does not read it`,
      {
        hint: `look at it (ls -l ${file}): a repository's files are read only from inside it`,
      },
    );
  }
  return readTextIfExists(real, max);
}

/**
 * `real` (what `file` resolves to) lies in `root`'s working tree: not out of it, and not in a git
 * folder unless `file` itself names one (agentbox's own `.git/info/exclude`). A repository cannot
 * track a file under `.git`, so a link into it is a stranger's: `.mcp.json -> .git/config` showed
 * the clone's config in `agentbox trust`, with the token actions/checkout keeps there
 * (`http.<url>.extraheader`).
 */
function inRepositoryTree(file: string, real: string, root: string): boolean {
  let base = root;
  try {
    base = fs.realpathSync(root);
  } catch {
    // The root as given.
  }
  const rel = path.relative(base, real);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return false;
  const inGit = (p: string) => p.split(path.sep).some((part) => part.toLowerCase() === '.git');
  return !inGit(rel) || inGit(path.relative(root, file));
}

/**
 * Refuses a path of a repository that leads out of it through a link — the file, or a folder on
 * the way (the deepest that exists decides): what agentbox writes into a repository stays in it.
 * A cloned repository's `.github -> ~/somewhere` made `agentbox init --ci github` write its
 * workflow there. (A broken link as the file itself is replaced, not written through.)
 */
export function refuseWriteOut(file: string, root: string): void {
  let probe = file;
  for (;;) {
    try {
      const real = fs.realpathSync(probe);
      if (inRepositoryTree(probe, real, root)) return;
      throw new AgentboxError(
        'IO_FAILED',
        `${file} leads out of the repository through a link (${probe} is ${real}), so agentbox does not write it`,
        {
          hint: `nothing was changed; look at it (ls -l ${probe}): agentbox writes into a repository only inside it`,
        },
      );
    } catch (error) {
      if (errnoCode(error) !== 'ENOENT' && errnoCode(error) !== 'ENOTDIR') throw error;
      const up = path.dirname(probe);
      if (up === probe) return;
      probe = up;
    }
  }
}

/**
 * NOTE: a repository can carry `agentbox.yaml -> /dev/zero` (git keeps links): readFileSync read
 * it until the memory ran out (16 GB, then std::bad_alloc) in `agentbox trust`, the first command
 * a person runs on a stranger's repository; a FIFO made it wait for good.
 */
function notAFile(file: string): AgentboxError {
  return new AgentboxError('IO_FAILED', `${file} is not a regular file, so agentbox does not read it`, {
    hint: `look at it (ls -l ${file}): a link to a device or a FIFO is never a file agentbox reads`,
  });
}

export function exists(file: string): boolean {
  return fs.existsSync(file);
}

export function mkdirp(dir: string): void {
  try {
    fs.mkdirSync(dir, { recursive: true });
  } catch (error) {
    throw fsError(error, 'create the folder', dir);
  }
}

/**
 * Fails early, before anything is written, when a folder cannot be written to. Root ignores
 * permission bits, so this asks the kernel (access(2)) rather than reading the mode.
 */
export function assertWritableDir(dir: string): void {
  try {
    fs.accessSync(dir, fs.constants.W_OK);
  } catch (error) {
    throw fsError(error, 'write into', dir);
  }
}

/** A regular file this process may execute. */
export function isExecutableFile(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Which file or folder is at `file` now (its inode and when it was made: a new one may get a freed
 * inode), or null: nothing. Two reads that agree saw the same one.
 */
export function identity(file: string): string | null {
  try {
    const stat = fs.lstatSync(file);
    return `${stat.ino}/${stat.birthtimeMs}`;
  } catch {
    return null;
  }
}
