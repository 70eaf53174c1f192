import path from 'node:path';
import { canonical } from '../airlock/paths.js';
import { type ReadFence, readable } from './read-allowlist.js';

/** Shell and quoting characters a path word ends at (`open('/x')`, `a;cat b`, `"$HOME/x"`). */
const SEPARATORS = /[\s'"`;|&<>(),=[\]{}]+/;
/** What programs print when a read fails: the sandbox hides a denied path as missing (or EACCES). */
const READ_FAILED = /No such file or directory|Permission denied|ENOENT|EACCES|FileNotFoundError/;
const MAX_WORDS = 400;

/**
 * The words of a shell command, and of its output's lines that report a failed read, that may name
 * a path: the candidates for a read the sandbox hid. Pure.
 */
export function pathWords(command: string, output: string): string[] {
  const failed = output.split('\n').filter((line) => READ_FAILED.test(line));
  const words = [command, ...failed]
    .flatMap((text) => text.split(SEPARATORS))
    .map((w) => w.replace(/:+$/, ''))
    .filter((w) => w.length > 0 && w.length < 4096 && !w.startsWith('-'));
  return [...new Set(words)].slice(0, MAX_WORDS);
}

/** `~/x`, `$HOME/x`, `${HOME}/x` → the home's path. Pure. */
function expandHome(word: string, home: string | undefined): string {
  if (!home) return word;
  const m = /^(?:~|\$HOME|\$\{HOME\})(?=\/|$)/.exec(word);
  return m ? `${home}${word.slice(m[0].length)}` : word;
}

/**
 * The paths a shell command reached for that its sandbox hid: each word of the command (or of an
 * error line it printed) that names, from `cwd`, a path outside the read fence. The sandbox is
 * silent about them (measured: a read sees `No such file or directory`, no violation note; a write
 * into a hidden folder lands in the empty throwaway folder the runtime mounts over it and is gone
 * when the command ends), so this is how they reach the run's log.
 * NOTE: for the log only, never a permission: the kernel already refused. A path a script builds
 * at run time and never prints is refused all the same, and not logged.
 */
export function hiddenReads(
  fence: ReadFence,
  cwd: string,
  home: string | undefined,
  command: string,
  output: string,
): string[] {
  const out = new Set<string>();
  for (const word of pathWords(command, output)) {
    const full = path.resolve(cwd, expandHome(word, home));
    // `canonical` resolves the deepest existing part (a planted link included): a path that does
    // not exist is judged by the folder it would be in (`> ~/new.txt`, `cat ~/.no-such-file`).
    if (!readable(fence, canonical(full))) out.add(canonical(full));
  }
  return [...out];
}
