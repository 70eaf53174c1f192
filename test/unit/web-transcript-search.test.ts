import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HttpError } from '../../src/web/http.js';
import { transcriptSearchOf } from '../../src/web/transcript.js';
import { create, errorOf, ledgerRepo } from './fixtures/ledger.js';

/**
 * `GET /api/runs/<run>/transcript/search?q=` (issue 40): the matching entries' ids in order; a
 * query empty or over 200 characters is a 400 that says which (the server logs it `ui_refused`).
 */
describe('the transcript search route', () => {
  const setup = async () => {
    const { ledger } = ledgerRepo();
    const run = await create(ledger, 'look', '2026-03-01T10:00:00Z', { type: 'fix' });
    const line = (k: number) =>
      JSON.stringify({
        type: 'assistant',
        timestamp: `2026-03-01T10:00:0${k}Z`,
        message: { content: [{ type: 'text', text: k === 1 ? 'a Needle here' : `step ${k}` }] },
      });
    fs.mkdirSync(path.join(run.dir, 'raw'), { recursive: true });
    fs.writeFileSync(path.join(run.dir, 'raw', 'stream.jsonl'), `${[0, 1, 2].map(line).join('\n')}\n`);
    return { ledger, run };
  };
  const q = (text: string) => new URLSearchParams({ q: text });

  it('answers the ids of the matching entries, any case', async () => {
    const { ledger, run } = await setup();
    const found = transcriptSearchOf(ledger, {}, run.id, q('NEEDLE'));
    expect(found).toEqual({
      name: run.name,
      q: 'NEEDLE',
      matches: [expect.stringMatching(/^s\d+\.0$/)],
      capped: false,
    });
    expect(transcriptSearchOf(ledger, {}, run.id, q('nothing')).matches).toEqual([]);
  });

  it.each([
    ['', /^q must be 1 to 200 characters, not empty$/],
    ['   ', /^q must be 1 to 200 characters, not empty$/],
    ['x'.repeat(201), /^q must be 1 to 200 characters, not 201 characters$/],
  ])('q %j: 400 saying why', async (text, message) => {
    const { ledger, run } = await setup();
    const error = await errorOf(() => transcriptSearchOf(ledger, {}, run.id, q(text)));
    expect(error).toBeInstanceOf(HttpError);
    expect((error as HttpError).status).toBe(400);
    expect((error as HttpError).message).toMatch(message);
  });
});
