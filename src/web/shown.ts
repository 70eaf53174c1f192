import { shortSha } from '../gate/patch-seen.js';
import { type Ledger, readRun, resolveRun } from '../ledger/index.js';
import { patchSha256, recordShown } from '../ledger/reviewed.js';
import { HttpError } from './http.js';

const SHA256 = /^[0-9a-f]{64}$/;

/**
 * `POST /api/runs/<run>/shown` `{ patch_sha256 }`: the page drew this patch where the person sees
 * it (its tab in front), so it is recorded as shown to them (src/ledger/reviewed.ts), which
 * `merge --yes` compares with the patch it applies. A read never records: a tab left in the
 * background that redraws a new patch, or a script polling the API, has shown nobody anything.
 * A hash that is not the patch's now is refused (409): the page drew another one.
 */
export function shownAction(ledger: Ledger, ref: string, input: Record<string, unknown>) {
  const run = readRun(ledger, resolveRun(ledger, ref));
  const sent = input.patch_sha256;
  if (typeof sent !== 'string' || !SHA256.test(sent))
    throw new HttpError(400, '"patch_sha256" must be the sha256 of the patch the page drew (64 hex digits)');
  const now = patchSha256(run.dir);
  if (now === null) throw new HttpError(404, `${run.name} has no patch`);
  if (now !== sent)
    throw new HttpError(
      409,
      `${run.name}: the patch changed since the page drew it: ${shortSha(sent)} → ${shortSha(now)}`,
      { code: 'PATCH_CHANGED', patch_sha256: now },
    );
  recordShown(run.dir, now, 'ui');
  return { run: run.name, patch_sha256: now, recorded: true };
}
