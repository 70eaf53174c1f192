import { lastShown, patchSha256, type Shown } from '../ledger/reviewed.js';
import type { Styler } from '../util/style.js';

/*
 * The patch a person reviewed is the patch merged. `agentbox diff`, the web page and the merge
 * prompt record the sha256 of the patch they showed (src/ledger/reviewed.ts); `merge` prints the
 * hash it applies and refuses a patch that changed since it was last shown here, until it is shown
 * again. The rule is the same for every run: a local run's patch changes after REVIEW when it is
 * resumed; a fetched run's, when a publication replaces it. A run never shown keeps merging with
 * `--yes` as before (scripts, CI): there is no review it could contradict.
 */

export interface PatchSeen {
  /** The patch's sha256 now. */
  readonly sha256: string;
  /** What was last shown here; null: never. */
  readonly shown: Shown | null;
  /** It was shown, and what is here now is another patch. */
  readonly changed: boolean;
}

export function patchSeen(runDir: string): PatchSeen | null {
  const sha256 = patchSha256(runDir);
  if (sha256 === null) return null;
  const shown = lastShown(runDir);
  return { sha256, shown, changed: shown !== null && shown.sha256 !== sha256 };
}

/** `a1b2c3d4e5f6`: how a hash is shown beside text (the full one is printed where it is applied). */
export const shortSha = (sha: string): string => sha.slice(0, 12);

/** `the patch changed since it was shown here (by diff at …): a1b2… → c3d4…`. Pure. */
export function changedSinceLine(seen: PatchSeen): string {
  const s = seen.shown!;
  return `the patch changed since it was last shown here (by ${s.by} at ${s.at}): ${shortSha(s.sha256)} → ${shortSha(seen.sha256)}`;
}

/** `sha256 a1b2… · shown here by diff at …`, or never shown, or changed since (`show`). Pure. */
export function patchSeenLine(seen: PatchSeen, style: Styler): string {
  const how = !seen.shown
    ? style.dim('never shown here (agentbox diff shows it)')
    : seen.changed
      ? style.bad(
          `CHANGED since shown here (${shortSha(seen.shown.sha256)} by ${seen.shown.by} at ${seen.shown.at})`,
        )
      : `shown here by ${seen.shown.by} at ${seen.shown.at}`;
  return `sha256 ${seen.sha256} · ${how}`;
}
