import { AgentboxError } from '../errors.js';

/**
 * Where a runner installs agentbox from (`--agentbox-from`): an npm spec, a tarball URL or a git
 * URL, as `npm install` takes them. The value ends up in YAML and in a shell line, so it is held to
 * one printable word here and single-quoted where it is used (see `shellWord`).
 */
export type SourceKind = 'npm' | 'tarball' | 'git';

export const SOURCE_EXAMPLES = [
  'agentbox@<version> or @team/agentbox@<version> (a spec, on the registry your runners use)',
  'https://files.example/agentbox-<version>.tgz (a tarball from `npm pack`, hosted where runners reach it)',
  'git+https://github.com/<owner>/agentbox.git#<commit> (a git URL; npm builds it on the runner)',
];

const NPM_SPEC = /^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*(@[\w.^~<>=|*+-]+)?$/i;
const TARBALL = /^https?:\/\/[^/]+\/\S*$/i;
const GIT =
  /^(git\+(https?|ssh|file):\/\/\S+|git:\/\/\S+|(github|gitlab|bitbucket):[\w.-]+\/[\w.-]+(#\S+)?)$/i;

function refuse(value: string, why: string): AgentboxError {
  return new AgentboxError('USAGE', `invalid --agentbox-from ${JSON.stringify(value)}: ${why}`, {
    hint: `pass one of:\n  ${SOURCE_EXAMPLES.join('\n  ')}`,
  });
}

/** The kind of an install source; a value that is none of the three, or not one word, is an error. */
export function checkSource(value: string): SourceKind {
  if (value === '') throw refuse(value, 'it is empty');
  if (/[\u0000-\u001f\u007f]/.test(value)) throw refuse(value, 'it holds a control character or a newline');
  if (/\s/.test(value)) throw refuse(value, 'it holds a space');
  // A GitHub expression inside a `run:` script is evaluated by the platform before the shell sees it.
  if (value.includes('${{')) throw refuse(value, 'it holds a GitHub expression "${{"');
  if (value.length > 1000) throw refuse(value, 'it is longer than 1000 characters');
  if (GIT.test(value)) return 'git';
  if (TARBALL.test(value))
    return value.startsWith('https:') || isLoopback(value) ? 'tarball' : insecure(value);
  if (NPM_SPEC.test(value)) return 'npm';
  throw refuse(value, 'it is not an npm spec, a tarball URL or a git URL');
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
