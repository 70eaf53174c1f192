import { assertHuman } from '../gate/gate.js';
import { resolveRun } from '../ledger/index.js';
import { loadRunContext } from '../run/begin/context.js';
import { detachRun } from '../run/detach.js';
import { openRevision, type RefusalKind } from '../run/revise-open.js';
import { type ActionContext, domain, startedHere } from './actions.js';
import { HttpError, stringField } from './http.js';

/**
 * `POST /api/runs/<run>/revise {message?, comments?: [{file, line, text}], patch_sha256?}`: as `agentbox revise
 * <run> "<message>" --comment <file>:<line> "<text>"… --detach` (src/run/revise-open.ts, the
 * same code), answered 201 `{ run, detached, revision }`. A run that cannot be revised (not in
 * REVIEW, fetched, its session gone, taken by another command) or that a run's checks refuse
 * (CONFIG_CHANGED: today's envelope differs) is 409; a bad review (empty, a bad place) 400;
 * each refusal is logged in the run's events.jsonl, `by: "ui"`.
 */
export async function reviseAction(ac: ActionContext, ref: string, body: Record<string, unknown>) {
  const message = stringField(body, 'message') ?? '';
  const comments = commentArgs(body.comments);
  // The patch the page drew: a review written against another is refused (409), not sent.
  const patchShown = stringField(body, 'patch_sha256');
  let kind = null as RefusalKind | null;
  try {
    return await domain(async () => {
      assertHuman(ac.env, 'revise', ac.root);
      let revision = 0;
      const started = await startedHere(ac, async (ctx) => {
        const rc = await loadRunContext(ctx);
        const name = resolveRun(rc.ledger, ref);
        const ask = { feedback: message, comments, by: 'ui' as const, patchShown };
        const { next } = await openRevision(ctx, rc, name, ask, (k) => {
          kind = k;
        });
        revision = next.number;
        await detachRun(ctx, rc.ledger, name, true, ['--revision']);
      });
      return { ...started, revision };
    });
  } catch (error) {
    // The run's state refused it (a conflict), not what was sent; so did a check any run makes
    // (today's configuration gives another envelope, no sandbox): a conflict, not a server fault.
    if (error instanceof HttpError && kind !== null) {
      const status = kind === 'blocked' || error.status >= 500 ? 409 : error.status;
      if (status !== error.status) throw new HttpError(status, error.message, error.extra);
    }
    throw error;
  }
}

/**
 * `comments` as the CLI's `--comment` values (place, text…): `side: "old"` names a removed line by
 * its number before the change (`<file>:-<line>`). A bad shape is a 400 naming the item. Pure.
 */
export function commentArgs(raw: unknown): string[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw new HttpError(400, '"comments" must be a list of {file, line, side?, text}');
  return raw.flatMap((c: unknown, i) => {
    const item = (c ?? {}) as Record<string, unknown>;
    const { file, line, side, text } = item;
    const sided = side === undefined || side === 'old' || side === 'new';
    // NOTE: a negative line would read as `<file>:-<line>`, the old side: refused here.
    const numbered = Number.isInteger(line) && (line as number) >= 0;
    if (typeof file !== 'string' || typeof text !== 'string' || !numbered || !sided) {
      throw new HttpError(
        400,
        `comment ${i + 1}: not {file, line, side?, text} (a path, a line number from 1, "old" or "new", a text): ${JSON.stringify(c)}`,
      );
    }
    return [`${file}:${side === 'old' ? '-' : ''}${line}`, text];
  });
}
