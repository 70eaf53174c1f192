import fs from 'node:fs';
import path from 'node:path';
import { parse, parseDocument, stringify } from 'yaml';

/**
 * A page's tour, kept true by a test (the README's, docs/getting-started.md's): the commands in its
 * marked blocks are run in order and what they print is compared with what the page shows, once
 * what differs from run to run is replaced by placeholders (see normalize).
 *
 *     <!-- tour:start -->
 *     ```text
 *     $ agentbox status
 *     …its output…
 *     ```
 *     <!-- tour:end -->
 *
 * A page may have several such blocks, read in order. Keys the reader sets by hand in a YAML file
 * are a block of their own: `<!-- tour:set agentbox.yaml -->` before a fenced yaml block sets each
 * of its values in that file of the repository (its other keys and comments stay).
 */
export type TourStep =
  | { readonly kind: 'command'; readonly command: string; readonly output: string[] }
  | { readonly kind: 'set'; readonly file: string; readonly content: string };

const BLOCK =
  /<!-- tour:start -->\s*```text\n([\s\S]*?)```\s*<!-- tour:end -->|<!-- tour:set (\S+) -->\s*```yaml\n([\s\S]*?)```/g;

export function tourSteps(markdown: string, page: string): TourStep[] {
  const steps: TourStep[] = [];
  let commands = 0;
  for (const m of markdown.matchAll(BLOCK)) {
    if (m[2]) {
      steps.push({ kind: 'set', file: m[2], content: m[3]! });
      continue;
    }
    let current: { kind: 'command'; command: string; output: string[] } | undefined;
    for (const line of m[1]!.replace(/\n$/, '').split('\n')) {
      if (line.startsWith('$ ')) {
        current = { kind: 'command', command: line.slice(2), output: [] };
        steps.push(current);
        commands++;
      } else if (current) current.output.push(line);
      else throw new Error(`${page}: a tour block must start with a "$ " command line, not: ${line}`);
    }
  }
  if (commands === 0) throw new Error(`${page} has no <!-- tour:start --> … <!-- tour:end --> block`);
  return steps;
}

/** Words as a POSIX shell splits them, for the quoting the tours use ("…" and '…'). */
export function words(command: string): string[] {
  return [...command.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
}

/**
 * What differs from run to run, replaced by a placeholder; spacing collapsed (columns vary).
 * `also` maps a placeholder to what the page shows (a path: `/home/me/greet`) and what the test
 * had there; a test repository (gitRepo's temp folder) is `<repo>` everywhere.
 */
export function normalize(out: string, also: Record<string, RegExp> = {}): string[] {
  let text = out.replace(/\u001b\[[0-9;]*m/g, '').replace(/\/tmp\/agentbox-repo-\w+/g, '<repo>');
  for (const [placeholder, pattern] of Object.entries(also)) text = text.replace(pattern, placeholder);
  return text
    .replace(/\d\d-\d\d-\d\d_\d{4}__[a-z0-9-]+__[0-9a-f]{6}/g, '<run>')
    .replace(/\b[0-9a-f]{64}\b/g, '<sha256>')
    .replace(/\b[0-9a-f]{7,40}\b/g, '<sha>')
    .replace(/\b[0-9a-f]{6}\b/g, '<id>')
    .replace(/\$\d+\.\d+/g, '$<cost>')
    .replace(/\b\d+(\.\d+)?(ms|s|m|h)\b/g, '<time>')
    .replace(/pid \d+/g, 'pid <n>')
    .replace(/[ \t]+/g, ' ')
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .replace(/\n+$/, '')
    .split('\n');
}

/**
 * Plays the steps: `run` runs one command (its words) and returns what it printed; a file step
 * changes the file under `dir`. Returns each command's output, in order. `TOUR_WRITE=<file>` writes
 * the whole transcript, to paste into the page; `asShown` puts the page's paths in it.
 */
export async function playTour(
  steps: TourStep[],
  dir: string,
  run: (words: string[], command: string) => Promise<string>,
  options: { env?: NodeJS.ProcessEnv; asShown?: (printed: string) => string } = {},
): Promise<{ step: TourStep & { kind: 'command' }; printed: string }[]> {
  const { env = process.env, asShown = (printed: string) => printed } = options;
  const transcript: string[] = [];
  const results: { step: TourStep & { kind: 'command' }; printed: string }[] = [];
  for (const step of steps) {
    if (step.kind === 'command') {
      const printed = await run(words(step.command), step.command);
      transcript.push(`$ ${step.command}`, asShown(printed).replace(/\n+$/, ''), '');
      results.push({ step, printed });
    } else {
      setYaml(path.join(dir, step.file), step.content);
      transcript.push(`(set in ${step.file})`, step.content);
    }
  }
  if (env.TOUR_WRITE) fs.writeFileSync(env.TOUR_WRITE, transcript.join('\n'));
  return results;
}

/**
 * Sets each leaf of `values` (YAML) in a YAML file, as a person fills in a key: its line gets the
 * value and every other line stays (a YAML library would move the comment under an empty key onto
 * it). A key the file does not have is an error: the page says to fill in keys that are there.
 */
function setYaml(file: string, values: string): void {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const leaves = (value: unknown, at: string[]): [string[], unknown][] =>
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? Object.entries(value).flatMap(([key, inner]) => leaves(inner, [...at, key]))
      : [[at, value]];
  for (const [at, value] of leaves(parse(values), [])) {
    const index = keyLine(lines, at);
    if (index < 0) throw new Error(`${file} has no key ${at.join('.')} to fill in`);
    const [, key, comment] = /^(\s*[^\s#:][^:]*:)\s*[^#]*?(\s#.*)?$/.exec(lines[index]!)!;
    lines[index] = `${key} ${stringify(value).trim()}${comment ?? ''}`;
  }
  const text = lines.join('\n');
  for (const [at, value] of leaves(parse(values), []))
    if (parseDocument(text).getIn(at) !== value)
      throw new Error(`${file}: ${at.join('.')} did not take ${value}`);
  fs.writeFileSync(file, text);
}

/** The line of the key at `at` (a path of mapping keys), found by indentation; -1 if absent. */
function keyLine(lines: string[], at: string[]): number {
  let from = 0;
  let parentIndent = -1;
  for (const key of at) {
    // A mapping's keys share the indentation of its first one; a line indented less ends it.
    let childIndent: number | undefined;
    let found = -1;
    for (let i = from; i < lines.length && found < 0; i++) {
      const line = lines[i]!;
      if (line.trim() === '' || line.trim().startsWith('#')) continue;
      const indent = line.length - line.trimStart().length;
      if (indent <= parentIndent) break;
      childIndent ??= indent;
      if (indent === childIndent && line.trimStart().startsWith(`${key}:`)) found = i;
    }
    if (found < 0) return -1;
    from = found + 1;
    parentIndent = childIndent!;
  }
  return from - 1;
}
