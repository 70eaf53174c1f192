import { describe, expect, it } from 'vitest';
import { HttpError } from '../../src/web/http.js';
import {
  idempotencyKey,
  KEY_MAX,
  KEY_TTL_MS,
  KeyMemory,
  requestFingerprint,
} from '../../src/web/idempotency.js';

/** `POST /api/runs`' Idempotency-Key (src/web/idempotency.ts): the key's shape and what is remembered. */
describe('Idempotency-Key', () => {
  it.each([
    ['c0ffee00-0000-4000-8000-000000000001', 'c0ffee00-0000-4000-8000-000000000001'],
    ['0123456789abcdef0123456789abcdef', '0123456789abcdef0123456789abcdef'],
    [undefined, null],
  ])('%j is %j', (header, key) => {
    expect(idempotencyKey(header === undefined ? {} : { 'idempotency-key': header })).toBe(key);
  });

  it.each([[''], ['a b'], ['x'.repeat(201)], ['ünï'], ['a\tb'], ['k1, k2']])('%j is a 400', (header) => {
    expect(() => idempotencyKey({ 'idempotency-key': header })).toThrow(
      expect.objectContaining({ status: 400, message: expect.stringContaining('Idempotency-Key') }),
    );
  });

  it('a repeat gets the first answer, also while it is being made; another request under the key is a 422', async () => {
    const memory = new KeyMemory();
    let made = 0;
    const make = async () => ({ run: `run-${++made}` });
    const fp = requestFingerprint({ type: 'fix', task: 'x' });
    const [a, b] = await Promise.all([memory.once('k', fp, 0, make), memory.once('k', fp, 1, make)]);
    expect([a, b]).toEqual([
      { value: { run: 'run-1' }, repeated: false },
      { value: { run: 'run-1' }, repeated: true },
    ]);
    // The fields' order does not make another request.
    expect(await memory.once('k', requestFingerprint({ task: 'x', type: 'fix' }), 2, make)).toMatchObject({
      repeated: true,
    });
    const other = memory.once('k', requestFingerprint({ type: 'fix', task: 'y' }), 3, make);
    await expect(other).rejects.toBeInstanceOf(HttpError);
    await expect(other).rejects.toMatchObject({ status: 422 });
    expect(made).toBe(1);
  });

  it('a failed start is forgotten; a key is forgotten after its time, and the oldest past the bound', async () => {
    const memory = new KeyMemory();
    let made = 0;
    const fail = async () => {
      made++;
      throw new Error('bad task');
    };
    await expect(memory.once('k', 'r', 0, fail)).rejects.toThrow('bad task');
    expect(await memory.once('k', 'r', 1, async () => ++made)).toEqual({ value: 2, repeated: false });
    expect((await memory.once('k', 'r', KEY_TTL_MS, async () => ++made)).repeated).toBe(true);
    expect(await memory.once('k', 'r', KEY_TTL_MS + 1, async () => ++made)).toEqual({
      value: 3,
      repeated: false,
    });
    for (let i = 0; i < KEY_MAX; i++) await memory.once(`n${i}`, 'r', KEY_TTL_MS + 2, async () => i);
    // 'k' was the oldest of KEY_MAX + 1: it went first.
    expect((await memory.once('k', 'r', KEY_TTL_MS + 3, async () => 'again')).value).toBe('again');
    expect((await memory.once(`n${KEY_MAX - 1}`, 'r', KEY_TTL_MS + 3, async () => 'x')).repeated).toBe(true);
  });
});
