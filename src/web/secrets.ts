import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { AgentboxError } from '../errors.js';
import type { Ledger } from '../ledger/index.js';
import type { Env } from '../util/env.js';
import { writeAtomicSync } from '../util/fs.js';
import { agentboxStateDir } from '../util/state-dir.js';
import type { Secrets } from './auth.js';

/** The UI's secrets and its last port, kept so a restarted server is the same address and login. */
export interface UiState extends Secrets {
  readonly port: number | null;
}

/** Where one repository's UI state lives, and where an older agentbox kept it. */
export interface UiStatePlace {
  readonly env: Env;
  /** The repository's root (canonicalised here: a symlinked path is the same repository). */
  readonly root: string;
  readonly ledger: Ledger;
}

/**
 * `$XDG_STATE_HOME/agentbox/ui/<hash of the repository's canonical root>/state.json` (or under
 * `~/.local/state`): the person's, outside every repository, so a cloned repository can neither
 * choose the token (a committed file) nor leave it readable, and no run reaches it (its sandbox
 * and deny rules hide agentbox's state dir, src/sandbox/prepare.ts and src/run/begin/launch.ts).
 */
export function uiStateFile(place: Pick<UiStatePlace, 'env' | 'root'>): string {
  const root = fs.realpathSync(place.root);
  const id = createHash('sha256').update(root).digest('hex').slice(0, 16);
  return path.join(agentboxStateDir(place.env), 'ui', id, 'state.json');
}

/** Where agentbox up to this version kept it: inside the repository, never trusted again. */
export const legacyUiStateFile = (ledger: Ledger): string => path.join(ledger.dir, 'ui', 'state.json');

const fresh = (): string => randomBytes(24).toString('base64url');

function valid(o: unknown): o is UiState {
  if (typeof o !== 'object' || o === null) return false;
  const r = o as Record<string, unknown>;
  const secret = (v: unknown) => typeof v === 'string' && /^[\w-]{32}$/.test(v);
  return (
    secret(r.token) && secret(r.session) && secret(r.csrf) && (r.port === null || Number.isInteger(r.port))
  );
}

const uid = (): number => process.getuid?.() ?? 0;

/** Why a kept file or folder is not the person's alone (another owner, a wider mode, a link), or null. */
export function notPrivate(stat: fs.Stats, kind: 'file' | 'folder', me = uid()): string | null {
  if (kind === 'file' ? !stat.isFile() : !stat.isDirectory()) return `it is not a plain ${kind}`;
  if (stat.uid !== me) return `it belongs to user ${stat.uid}, not to you (${me})`;
  const mode = stat.mode & 0o777;
  if (mode & 0o077)
    return `its mode is ${mode.toString(8).padStart(4, '0')}, not ${kind === 'file' ? '0600' : '0700'}`;
  return null;
}

/** The kept state if it is sound and the person's alone; else why not (null: none kept). */
function readKept(file: string): { state: UiState } | { problem: string } | null {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(file);
  } catch {
    return null;
  }
  const problem = notPrivate(stat, 'file') ?? notPrivate(fs.lstatSync(path.dirname(file)), 'folder');
  if (problem) return { problem };
  try {
    const kept = JSON.parse(fs.readFileSync(file, 'utf8'));
    return valid(kept) ? { state: kept } : { problem: 'it is damaged' };
  } catch {
    return { problem: 'it is damaged' };
  }
}

/**
 * The kept state, or a new one (none kept, `renew`, or a file that is not sound: new secrets, old
 * cookies void). `say` tells the person on stderr why a file was not used or was removed.
 */
export function loadUiState(place: UiStatePlace, say: (line: string) => void, renew = false): UiState {
  dropLegacy(place.ledger, say);
  const file = uiStateFile(place);
  const kept = renew ? null : readKept(file);
  if (kept && 'state' in kept) return kept.state;
  if (kept)
    say(
      `agentbox ui: not using ${file}: ${kept.problem}; made new secrets (the old address and logins no longer work)`,
    );
  return saveUiState(place, { token: fresh(), session: fresh(), csrf: fresh(), port: null });
}

/**
 * An older agentbox's `.agents/ui/state.json`, or one a cloned repository carried (its token and
 * port chosen by a stranger): never read, removed, and said.
 */
function dropLegacy(ledger: Ledger, say: (line: string) => void): void {
  const legacy = legacyUiStateFile(ledger);
  if (!fs.existsSync(legacy) && !isLink(legacy)) return;
  fs.rmSync(legacy, { force: true });
  try {
    fs.rmdirSync(path.dirname(legacy));
  } catch {
    // Not empty, or gone: leave the folder.
  }
  say(
    `agentbox ui: removed ${legacy} without using it: the UI's secrets now live in your own state folder, outside the repository (a repository could carry a token of its choosing there); new secrets, so the old address and logins no longer work`,
  );
}

function isLink(p: string): boolean {
  try {
    return fs.lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * Writes the state 0600 in a 0700 folder that is the person's. A folder of another owner is not
 * written into (it could be read or swapped): an error saying which folder to remove.
 */
export function saveUiState(place: Pick<UiStatePlace, 'env' | 'root'>, state: UiState): UiState {
  const file = uiStateFile(place);
  const dir = path.dirname(file);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const problem = notPrivate(fs.lstatSync(dir), 'folder');
  if (problem && !problem.startsWith('its mode'))
    throw new AgentboxError('PERMISSION_DENIED', `cannot keep the web UI's secrets in ${dir}: ${problem}`, {
      hint: `remove that folder (rm -r ${dir}), then run agentbox ui again`,
    });
  fs.chmodSync(dir, 0o700);
  // NOTE: the atomic write follows a symlink to its target: a planted link goes first.
  fs.rmSync(file, { force: true });
  writeAtomicSync(file, `${JSON.stringify(state)}\n`, 0o600);
  fs.chmodSync(file, 0o600);
  return state;
}
