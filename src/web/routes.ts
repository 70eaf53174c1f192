import type http from 'node:http';
import { AgentboxError } from '../errors.js';
import type { Ledger } from '../ledger/index.js';
import type { Env } from '../util/env.js';
import type { ActionContext } from './actions.js';
import { HttpError, json, type Reply, readJsonBody } from './http.js';
import { idempotencyKey, keyMemory, requestFingerprint } from './idempotency.js';
import { runsPage } from './runs.js';

// Loaded on first use: the actions bring the CLI's run machinery, the detail the Markdown
// sanitiser, settings the config writer. An idle server that only lists runs stays small.
const actions = () => import('./actions.js');
const detail = () => import('./detail.js');
const settings = () => import('./settings.js');
const recovery = () => import('./recovery.js');
const templates = () => import('./templates.js');
const liveDiff = () => import('./live-diff.js');
const transcript = () => import('./transcript.js');
const groups = () => import('./group-routes.js');

export interface RouteContext {
  readonly root: string;
  readonly ledger: Ledger;
  readonly env: Env;
  /** Largest request body, in bytes. */
  readonly limit: number;
}

const RUN_ACTIONS = new Set(['merge', 'discard', 'stop', 'resume', 'inject', 'restart', 'rerun', 'revise']);

/** `POST /api/runs/<run>/<action>`: the human gate and run control. */
async function runAction(
  ac: ActionContext,
  action: string,
  ref: string,
  input: Record<string, unknown>,
): Promise<Reply> {
  const { discardAction, injectAction, mergeAction, restartAction, stopAction } = await actions();
  switch (action) {
    case 'merge':
      return json(await mergeAction(ac, ref, input));
    case 'discard':
      return json(await discardAction(ac, ref));
    case 'stop':
      return json(await stopAction(ac, ref));
    case 'resume':
      return json(await (await import('./resume.js')).resumeAction(ac, ref, input), 202);
    case 'restart':
      return json(await restartAction(ac, ref, input));
    case 'rerun':
      return json(await (await import('./rerun.js')).rerunAction(ac, ref, input), 201);
    case 'revise':
      return json(await (await import('./revise.js')).reviseAction(ac, ref, input), 201);
    default:
      return json(await injectAction(ac, ref, input));
  }
}

/**
 * `POST /api/runs`: 201 and the run started; with an `Idempotency-Key` already answered for the
 * same request, 200 and that same run (src/web/idempotency.ts).
 */
async function startRun(ctx: RouteContext, ac: ActionContext, req: http.IncomingMessage): Promise<Reply> {
  const key = idempotencyKey(req.headers);
  const input = await readJsonBody(req, ctx.limit);
  const start = async () => (await actions()).startRunAction(ac, input);
  if (key === null) return json(await start(), 201);
  const { value, repeated } = await keyMemory(ctx.ledger).once(
    key,
    requestFingerprint(input),
    Date.now(),
    start,
  );
  return json(value, repeated ? 200 : 201);
}

/** `GET /api/runs/<run>/transcript`, `…/transcript/search?q=`, `…/transcript/<entry id>`. */
async function transcriptRoute(ctx: RouteContext, parts: string[], url: URL): Promise<Reply> {
  const t = await transcript();
  if (parts.length === 4) return json(t.transcriptOf(ctx.ledger, ctx.env, parts[2]!, url.searchParams));
  if (parts[4] === 'search')
    return json(t.transcriptSearchOf(ctx.ledger, ctx.env, parts[2]!, url.searchParams));
  return json(t.transcriptEntryOf(ctx.ledger, ctx.env, parts[2]!, parts[4]!));
}

/** A path's segments, decoded; a malformed escape (`%E0`) is the client's 400, not the server's 500. */
function pathParts(pathname: string): string[] {
  try {
    return pathname.split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    throw new HttpError(400, `not a path: ${pathname} (a malformed %-escape)`);
  }
}

/** The JSON API, one resource at a time; the request has passed every check already. */
export async function route(ctx: RouteContext, req: http.IncomingMessage, url: URL): Promise<Reply> {
  const method = req.method ?? 'GET';
  const parts = pathParts(url.pathname);
  if (parts[0] !== 'api') throw new HttpError(404, `no such page: ${url.pathname}`);
  const ac: ActionContext = { root: ctx.root, ledger: ctx.ledger, env: ctx.env };
  const body = () => readJsonBody(req, ctx.limit);
  try {
    if (parts[1] === 'runs' && parts.length === 2) {
      if (method === 'GET') return json(runsPage(ctx.ledger, url.searchParams));
      if (method === 'POST') return await startRun(ctx, ac, req);
    }
    if (parts[1] === 'runs' && parts.length === 3 && method === 'GET') {
      return json(await (await detail()).runDetail(ctx.ledger, ctx.root, parts[2]!));
    }
    if (parts[1] === 'runs' && parts.length === 4 && parts[3] === 'diff' && method === 'GET') {
      return json(await (await liveDiff()).liveDiffs.answer(ctx.ledger, ctx.root, parts[2]!, ctx.env));
    }
    if (parts[1] === 'runs' && parts[3] === 'transcript' && method === 'GET' && parts.length <= 5)
      return await transcriptRoute(ctx, parts, url);
    if (parts[1] === 'runs' && parts.length === 6 && parts[3] === 'revisions' && parts[5] === 'interdiff') {
      if (method === 'GET')
        return json(
          await (await import('./revisions.js')).interdiffOf(ctx.ledger, ctx.root, parts[2]!, parts[4]!),
        );
    }
    if (parts[1] === 'runs' && parts.length === 4 && parts[3] === 'session' && method === 'GET') {
      return json(await (await actions()).sessionState(ac, parts[2]!));
    }
    if (parts[1] === 'runs' && parts.length === 4 && parts[3] === 'shown' && method === 'POST') {
      return json((await import('./shown.js')).shownAction(ctx.ledger, parts[2]!, await body()));
    }
    if (parts[1] === 'runs' && parts.length === 4 && RUN_ACTIONS.has(parts[3]!) && method === 'POST') {
      return await runAction(ac, parts[3]!, parts[2]!, await body());
    }
    if (parts[1] === 'groups') return await (await groups()).groupRoute(ctx, ac, req, parts, method);
    if (parts[1] === 'recover' && parts.length === 2) {
      if (method === 'GET')
        return json({ runs: await (await recovery()).interruptedRuns(ctx.root, ctx.env) });
      if (method === 'POST') return json((await recovery()).startRecover(ctx.root, ctx.ledger, ctx.env), 202);
    }
    if (parts[1] === 'templates' && parts.length === 2) {
      if (method === 'GET') return json((await templates()).readTemplates(ctx.root, ctx.env));
      if (method === 'PUT')
        return json(await (await templates()).writeTemplate(ctx.root, ctx.env, await body()));
    }
    if (parts[1] === 'settings' && parts.length === 2) {
      if (method === 'GET') return json((await settings()).readSettings(ctx.root, ctx.env));
      if (method === 'PUT')
        return json(await (await settings()).writeSettings(ctx.root, ctx.env, await body()));
    }
  } catch (error) {
    // A read that failed the ledger's own checks (an unknown run, a bad name) is the client's.
    if (error instanceof AgentboxError) {
      const status = error.code === 'RUN_NOT_FOUND' ? 404 : error.code === 'CONFIG_INVALID' ? 409 : 400;
      throw new HttpError(status, error.message, error.hint ? { hint: error.hint } : {});
    }
    throw error;
  }
  throw new HttpError(404, `no such API: ${method} ${url.pathname}`);
}
