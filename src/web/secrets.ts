import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Ledger } from '../ledger/index.js';
import { writeAtomicSync } from '../util/fs.js';
import type { Secrets } from './auth.js';

/** The UI's secrets and its last port, kept so a restarted server is the same address and login. */
export interface UiState extends Secrets {
  readonly port: number | null;
}

/**
 * `.agents/ui/state.json` (0600, in a 0700 folder): a restarted `agentbox ui` reuses its token,
 * session and port, so an open page reconnects by itself and the printed address stays valid.
 * Runs cannot read it: every run's Claude Code is denied `Read` of `.agents/ui/**`
 * (src/airlock/rules.ts) and a fix run's shell is denied the whole ledger by its sandbox.
 */
export function uiStateFile(ledger: Ledger): string {
  return path.join(ledger.dir, 'ui', 'state.json');
}

const fresh = (): string => randomBytes(24).toString('base64url');

function valid(o: unknown): o is UiState {
  if (typeof o !== 'object' || o === null) return false;
  const r = o as Record<string, unknown>;
  const secret = (v: unknown) => typeof v === 'string' && /^[\w-]{32}$/.test(v);
  return (
    secret(r.token) && secret(r.session) && secret(r.csrf) && (r.port === null || Number.isInteger(r.port))
  );
}

/** The kept state, or a new one (a missing or damaged file, or `renew`: new secrets, old cookies void). */
export function loadUiState(ledger: Ledger, renew = false): UiState {
  const file = uiStateFile(ledger);
  if (!renew) {
    try {
      const kept = JSON.parse(fs.readFileSync(file, 'utf8'));
      if (valid(kept)) return kept;
    } catch {
      // Missing or damaged: a new one below.
    }
  }
  return saveUiState(ledger, { token: fresh(), session: fresh(), csrf: fresh(), port: null });
}

export function saveUiState(ledger: Ledger, state: UiState): UiState {
  const dir = path.dirname(uiStateFile(ledger));
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.chmodSync(dir, 0o700);
  writeAtomicSync(uiStateFile(ledger), `${JSON.stringify(state)}\n`);
  fs.chmodSync(uiStateFile(ledger), 0o600);
  return state;
}
