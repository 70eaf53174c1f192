import type http from 'node:http';

/** A request's answer as data: the router returns it, the server writes it. */
export interface Reply {
  readonly status: number;
  readonly body: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

/** A failure with its HTTP status, thrown by a route and answered as `{ error }`. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
  }
}

export const json = (body: unknown, status = 200): Reply => ({ status, body });

/**
 * The request's body as a JSON object: 413 over `limit` bytes (declared or streamed), 400 when it
 * is not JSON or not an object. An empty body is `{}`.
 */
export async function readJsonBody(
  req: http.IncomingMessage,
  limit: number,
): Promise<Record<string, unknown>> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) {
    req.resume();
    throw new HttpError(413, `body of ${declared} bytes is over the ${limit}-byte limit`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      req.resume();
      throw new HttpError(413, `body is over the ${limit}-byte limit`);
    }
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new HttpError(400, `body is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new HttpError(400, 'body is not a JSON object');
  }
  return value as Record<string, unknown>;
}

/** Headers every answer carries: no caching of private data, no referrer, no framing, no sniffing. */
export const BASE_HEADERS: Readonly<Record<string, string>> = {
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
};

export function send(res: http.ServerResponse, reply: Reply): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(reply.status, { ...BASE_HEADERS, 'content-type': 'application/json', ...reply.headers });
  res.end(JSON.stringify(reply.body));
}

/** A string field of a request body: required ones missing or of another type are a 400. */
export function stringField(body: Record<string, unknown>, key: string, required: true): string;
export function stringField(body: Record<string, unknown>, key: string, required?: false): string | undefined;
export function stringField(
  body: Record<string, unknown>,
  key: string,
  required = false,
): string | undefined {
  const value = body[key];
  if (value === undefined || value === null) {
    if (required) throw new HttpError(400, `"${key}" is required`);
    return undefined;
  }
  if (typeof value === 'number' && !required) return String(value);
  if (typeof value !== 'string')
    throw new HttpError(400, `"${key}" must be a string, not ${JSON.stringify(value)}`);
  if (required && value.trim() === '') throw new HttpError(400, `"${key}" is empty`);
  return value;
}
