import type http from 'node:http';
import type { Ledger } from '../ledger/index.js';
import type { Env } from '../util/env.js';
import type { ActionContext } from './actions.js';
import { mergeGroupAction } from './group-merge.js';
import { groupDetail, groupNamed } from './groups.js';
import { HttpError, json, type Reply, readJsonBody } from './http.js';
import { idempotencyKey, keyMemory, requestFingerprint } from './idempotency.js';

/** What the router hands on (src/web/routes.ts RouteContext). */
interface RouteContext {
  readonly root: string;
  readonly ledger: Ledger;
  readonly env: Env;
  readonly limit: number;
}

/**
 * `/api/groups/<group>…`: a group and its attempts, an attempt's diff (the run diff API's answer for
 * its run), and the merge of the attempt the person picked. Every request has passed the server's
 * checks (Host, token, CSRF) before it gets here.
 */
export async function groupRoute(
  ctx: RouteContext,
  ac: ActionContext,
  req: http.IncomingMessage,
  parts: readonly string[],
  method: string,
): Promise<Reply> {
  const ref = parts[2];
  if (ref !== undefined && parts.length === 3 && method === 'GET') return json(groupDetail(ctx.ledger, ref));
  if (
    ref !== undefined &&
    parts.length === 6 &&
    parts[3] === 'attempts' &&
    parts[5] === 'diff' &&
    method === 'GET'
  )
    return json(await attemptDiff(ctx, ref, parts[4]!));
  if (ref !== undefined && parts.length === 4 && parts[3] === 'merge' && method === 'POST')
    return mergeOnce(ctx, ac, req, ref);
  throw new HttpError(404, `no such API: ${method} /${parts.join('/')}`);
}

/** `GET /api/groups/<group>/attempts/<k>/diff`: as `GET /api/runs/<attempt's run>/diff`. */
async function attemptDiff(ctx: RouteContext, ref: string, k: string) {
  const group = groupNamed(ctx.ledger, ref);
  const member = /^\d{1,2}$/.test(k) ? group.state.members.find((m) => m.attempt === Number(k)) : undefined;
  if (!member) throw new HttpError(404, `group ${group.name} has no attempt ${JSON.stringify(k)}`);
  if (!member.run) throw new HttpError(404, `attempt ${k} of ${group.name} has not started`);
  const { liveDiffs } = await import('./live-diff.js');
  return liveDiffs.answer(ctx.ledger, ctx.root, member.run, ctx.env);
}

/**
 * The merge, answered once per `Idempotency-Key` as a start is (src/web/idempotency.ts): a repeat
 * gets the first answer, another request under the key a 422. Without a key, a second merge is
 * refused by the gate itself (the group is MERGED).
 */
async function mergeOnce(ctx: RouteContext, ac: ActionContext, req: http.IncomingMessage, ref: string) {
  const key = idempotencyKey(req.headers);
  const input = await readJsonBody(req, ctx.limit);
  const merge = () => mergeGroupAction(ac, ref, input);
  if (key === null) return json(await merge());
  const request = `POST /api/groups/${ref}/merge ${requestFingerprint(input)}`;
  const { value } = await keyMemory(ctx.ledger).once(key, request, Date.now(), merge);
  return json(value);
}
