import path from 'node:path';
import { AgentboxError } from '../errors.js';

/**
 * Where a runner installs agentbox from (`--agentbox-from`): an npm spec, a tarball URL, a git URL
 * or an absolute path (a tarball or a folder, also as a `file:` URL), as `npm install` takes them.
 * The value ends up in YAML and in a shell line, so it is held to one printable word here and
 * single-quoted where it is used (see `shellWord`). A path is read on the runner's own disk.
 */
export type SourceKind = 'npm' | 'tarball' | 'git' | 'path';

export const SOURCE_EXAMPLES = [
  'agentbox@<version> or @team/agentbox@<version> (a spec, on the registry your runners use)',
  'https://files.example/agentbox-<version>.tgz (a tarball from `npm pack`, hosted where runners reach it)',
  'git+https://github.com/<owner>/agentbox.git#<commit> (a git URL; npm builds it on the runner)',
  '/srv/agentbox-<version>.tgz or file:///srv/agentbox-<version>.tgz (an absolute path: it must exist on the runner)',
];

const NPM_SPEC = /^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*(@[\w.^~<>=|*+-]+)?$/i;
const TARBALL = /^https?:\/\/[^/]+\/\S*$/i;
const GIT =
  /^(git\+(https?|ssh|file):\/\/\S+|git:\/\/\S+|(github|gitlab|bitbucket):[\w.-]+\/[\w.-]+(#\S+)?)$/i;
/** What npm reads as a path relative to where it runs (npm-package-arg's file specs). */
const RELATIVE = /^(\.\.?|~)(\/|$)/;
/** npm reads a name ending so as a tarball file, and any other path as a folder. */
const TARBALL_NAME = /\.(tgz|tar\.gz|tar)$/i;
/** The characters a path may hold: npm reads `#`, `?` and `%` in a path its own way. */
const PATH_CHARS = /^[\w.+@=,~:/-]+$/;

function refuse(value: string, why: string, hint?: string): AgentboxError {
  return new AgentboxError('USAGE', `invalid --agentbox-from ${JSON.stringify(value)}: ${why}`, {
    hint: hint ?? `pass one of:\n  ${SOURCE_EXAMPLES.join('\n  ')}`,
  });
}

/**
 * The kind of an install source; a value that is none of them, or not one word, is an error. `cwd`
 * (where the person typed it) only serves the hint for a relative path.
 */
export function checkSource(value: string, cwd?: string): SourceKind {
  if (value === '') throw refuse(value, 'it is empty');
  if (/[\u0000-\u001f\u007f]/.test(value)) throw refuse(value, 'it holds a control character or a newline');
  if (/\s/.test(value)) throw refuse(value, 'it holds a space');
  // A GitHub expression inside a `run:` script is evaluated by the platform before the shell sees it.
  if (value.includes('${{')) throw refuse(value, 'it holds a GitHub expression "${{"');
  if (value.length > 1000) throw refuse(value, 'it is longer than 1000 characters');
  if (GIT.test(value)) return 'git';
  if (TARBALL.test(value))
    return value.startsWith('https:') || isLoopback(value) ? 'tarball' : insecure(value);
  if (/^file:/i.test(value) || value.startsWith('/')) {
    localPath(value, cwd);
    return 'path';
  }
  // npm reads `agentbox.tgz` and `vendor/agentbox.tgz` as paths (the second one as a GitHub repository).
  const name = value.slice(0, value.indexOf('@', 1) > 0 ? value.indexOf('@', 1) : undefined);
  if (RELATIVE.test(value) || (!name.startsWith('@') && TARBALL_NAME.test(name))) throw relative(value, cwd);
  if (NPM_SPEC.test(value)) return 'npm';
  if (!name.startsWith('@') && name.includes('/'))
    throw refuse(
      value,
      'npm reads <owner>/<repo> as a GitHub repository, and a relative path the same way',
      `write github:${value} for the repository, or an absolute path for a folder`,
    );
  throw refuse(value, 'it is not an npm spec, a tarball URL, a git URL or an absolute path');
}

/**
 * The path on disk a path source names (`/srv/a.tgz`, `file:///srv/a.tgz`, `file:/srv/a.tgz`), or
 * undefined for the other kinds. Held to what npm reads as that same absolute path.
 */
export function sourcePath(value: string): string | undefined {
  try {
    return checkSource(value) === 'path' ? localPath(value) : undefined;
  } catch {
    return undefined;
  }
}

/** What is said of a path source: npm reads it on the runner's own disk, which a container does not share. */
export const PATH_NOTE =
  "a path is read on the runner's own disk: a shell or self-hosted runner on this machine has it; a container runner (GitHub-hosted, GitLab's docker executor, a Kubernetes pod) does not";

function localPath(value: string, cwd?: string): string {
  let file = value;
  if (/^file:/i.test(value)) {
    const rest = value.slice('file:'.length);
    // NOTE: npm reads file://host/x as the path /host/x, not as a host: only no host is taken.
    if (/^\/\/[^/]/.test(rest))
      throw refuse(
        value,
        'npm reads file://<name>/… as the path /<name>/…',
        'write file:///<absolute path> (three slashes)',
      );
    file = rest.startsWith('///') ? rest.slice(2) : rest;
    if (!file.startsWith('/')) throw relative(value, cwd, file);
  }
  const segments = file.split('/').slice(1);
  if (segments[0] === '~') throw refuse(value, 'npm reads /~/ as the home folder of whoever runs it');
  if (!PATH_CHARS.test(file))
    throw refuse(
      value,
      'a path may hold letters, digits and . _ - + @ = , ~ : / only (npm reads # ? % its own way)',
    );
  if (segments.some((s, i) => s === '.' || s === '..' || (s === '' && i < segments.length - 1)))
    throw refuse(value, 'write the path without ".", ".." or "//"');
  if (segments[0] === '') throw refuse(value, 'it names the root folder');
  return file;
}

/** A relative path is read where npm runs on the runner: the job's checkout, or the pod's /work. */
function relative(value: string, cwd?: string, file = value): AgentboxError {
  const here = cwd && !file.startsWith('~') ? ` --agentbox-from ${path.resolve(cwd, file)}` : '';
  return refuse(
    value,
    'a relative path is read from the folder npm runs in on the runner, not from here',
    `pass an absolute path that exists on the runner${here ? `, e.g.${here}` : ''}`,
  );
}

/** A tarball over plain http is code fetched without TLS; only a loopback host (a test, a proxy) may. */
function insecure(value: string): never {
  throw refuse(value, 'a tarball URL must be https (plain http only on 127.0.0.1 or localhost)');
}

function isLoopback(url: string): boolean {
  try {
    const host = new URL(url).hostname;
    return host === '127.0.0.1' || host === 'localhost' || host === '[::1]';
  } catch {
    return false;
  }
}

/** One shell word, single-quoted: nothing in it is expanded, whatever it holds. */
export function shellWord(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/** The registry's name and this version: the default, used only once the registry says it is there. */
export const defaultSource = (version: string) => `agentbox@${version}`;

/** The header line of a generated file that records the source, so that a re-run keeps it. */
export const SOURCE_LINE = ' Installs agentbox from: ';

export function sourceComment(source: string): string {
  return `${SOURCE_LINE}${source} (kept by a re-run of init --ci; change it with --agentbox-from)`;
}

/** The source a generated file recorded, if it holds a valid one. */
export function recordedSource(text: string | undefined): string | undefined {
  const found = text?.match(/^# Installs agentbox from: (\S+)/m)?.[1];
  if (found === undefined) return undefined;
  try {
    checkSource(found);
    return found;
  } catch {
    return undefined;
  }
}
