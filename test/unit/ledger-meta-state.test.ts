import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isAgentboxError } from '../../src/errors.js';
import { canonicalJson, configHash, parseMeta, readMeta, serializeMeta } from '../../src/ledger/meta.js';
import {
  applyStatePatch,
  initialState,
  migrateState,
  parseState,
  serializeState,
} from '../../src/ledger/state.js';
import type { Envelope, RunState, RunStatus } from '../../src/ledger/types.js';
import { tempDir } from '../helpers/git-repo.js';
import { ENVELOPE, NOW, sampleMeta } from './fixtures/ledger-sample.js';

describe('configHash', () => {
  it('is 16 hex characters and ignores key order at every depth', () => {
    const a = configHash({ ...ENVELOPE, extra: { mode: 'plan', deny: { a: 1, b: [1, { y: 2, x: 1 }] } } });
    const b = configHash({
      human_only_commands: ['merge_a1b2c3'],
      extra: { deny: { b: [1, { x: 1, y: 2 }], a: 1 }, mode: 'plan' },
      safe_commands: ['scout_a1b2c3'],
      tools_allowlist: ['Read', 'Grep'],
      model: 'claude-sonnet-4-5',
    });
    expect(a).toMatch(/^[0-9a-f]{16}$/);
    expect(b).toBe(a);
  });

  it.each<[string, Envelope]>([
    ['model', { ...ENVELOPE, model: 'claude-opus-4' }],
    ['model null', { ...ENVELOPE, model: null }],
    ['a tool added', { ...ENVELOPE, tools_allowlist: ['Read', 'Grep', 'Edit'] }],
    ['tool order', { ...ENVELOPE, tools_allowlist: ['Grep', 'Read'] }],
    ['safe commands', { ...ENVELOPE, safe_commands: [] }],
    ['human-only commands', { ...ENVELOPE, human_only_commands: ['merge_a1b2c3', 'apply_a1b2c3'] }],
    ['extra', { ...ENVELOPE, extra: { permission_mode: 'acceptEdits' } }],
  ])('changes when the envelope changes: %s', (_label, changed) => {
    expect(configHash(changed)).not.toBe(configHash(ENVELOPE));
  });

  it('treats a missing extra like an empty one, and undefined values like missing keys', () => {
    expect(configHash({ ...ENVELOPE, extra: {} })).toBe(configHash(ENVELOPE));
    expect(canonicalJson({ b: 1, a: undefined, c: [undefined] })).toBe('{"b":1,"c":[null]}');
  });
});

describe('meta.yaml', () => {
  it.each([
    'fix auth bug',
    'fix "a; rm -rf ~" now',
    "it's: a 'quoted' - [list] {map} # not a comment",
    'yes',
    'null',
    '0x10',
    '2025-11-22',
    '- starts like a list',
    'line one\nline two\n\ttabbed\n',
    'unicode: 修复 🚀 naïve',
    '',
  ])('round-trips the task %j exactly', (task) => {
    const m = sampleMeta(task, { ...ENVELOPE, extra: { nested: { list: [1, 'two', null], flag: true } } });
    const text = serializeMeta(m);
    expect(text.startsWith('# Written once')).toBe(true);
    expect(parseMeta(text, '/x/meta.yaml')).toEqual(m);
  });

  it('records the envelope and its hash', () => {
    const m = sampleMeta();
    expect(m).toMatchObject({
      run_id: 'a1b2c3',
      type: 'fix',
      repo_sha_start: '9f13c2aa',
      created_at: NOW.toISOString(),
    });
    expect(m.config_hash).toBe(configHash(ENVELOPE));
    expect('extra' in m).toBe(false);
  });

  it.each([
    ['not yaml at all', 'run_name: [unclosed', /cannot read \/x\/meta.yaml/],
    ['a list', '- a\n- b\n', /meta.yaml is not an object/],
    ['a missing field', serializeMeta(sampleMeta()).replace(/^task:.*\n/m, ''), /"task" must be a string/],
    [
      'an unknown type',
      serializeMeta(sampleMeta()).replace('type: fix', 'type: deploy'),
      /"type" must be one of/,
    ],
    [
      'a newer schema',
      serializeMeta(sampleMeta()).replace('schema_version: 1', 'schema_version: 7'),
      /newer/,
    ],
  ])('refuses %s with RUN_CORRUPT naming the file', (_label, text, message) => {
    let thrown: unknown;
    try {
      parseMeta(text, '/x/meta.yaml');
    } catch (error) {
      thrown = error;
    }
    expect(isAgentboxError(thrown) && thrown.code).toBe('RUN_CORRUPT');
    expect((thrown as Error).message).toMatch(message);
  });
});

describe('state.json', () => {
  const state = initialState(sampleMeta('x'.repeat(500)), NOW, 4242);

  it('starts ACTIVE with the meta hash and a short summary for listings', () => {
    expect(state).toMatchObject({
      schema_version: 1,
      status: 'ACTIVE',
      pid: 4242,
      config_hash: sampleMeta().config_hash,
    });
    expect(state.summary?.type).toBe('fix');
    expect(Array.from(state.summary?.task ?? '')).toHaveLength(200);
    expect(parseState(serializeState(state), '/s')).toEqual(state);
  });

  it.each<[string, unknown, RegExp]>([
    ['not JSON', '{"status": ', /cannot read \/r\/state.json: /],
    ['an array', '[]', /state.json is not an object/],
    [
      'no schema_version',
      JSON.stringify({ ...state, schema_version: undefined }),
      /schema_version" is missing/,
    ],
    ['a newer schema_version', JSON.stringify({ ...state, schema_version: 2 }), /newer than this agentbox/],
    ['a bad status', JSON.stringify({ ...state, status: 'RUNNING' }), /"status" must be one of/],
    [
      'a bad failure',
      JSON.stringify({ ...state, failure: { kind: 'oops', message: 'x' } }),
      /"kind" must be one/,
    ],
    ['a negative count', JSON.stringify({ ...state, tool_calls: -1 }), /"tool_calls"/],
  ])('refuses %s with RUN_CORRUPT', (_label, text, message) => {
    expect(() => parseState(text as string, '/r/state.json')).toThrow(message);
    try {
      parseState(text as string, '/r/state.json');
    } catch (error) {
      expect(isAgentboxError(error) && error.code).toBe('RUN_CORRUPT');
      // A newer file needs an upgrade, a damaged one a look: the hints differ.
      expect(isAgentboxError(error) && error.hint).toMatch(
        /newer/.test(String(message)) ? /upgrade/ : /damaged/,
      );
    }
  });

  it('migrateState keeps known fields and drops unknown ones', () => {
    expect(migrateState({ ...state, surprise: 1 })).toEqual(state);
  });

  it.each<[string, Partial<RunState>, Partial<RunState>]>([
    [
      'leaving ACTIVE stamps ended_at',
      { status: 'DONE' },
      { status: 'DONE', ended_at: '2025-11-22T15:00:00.000Z' },
    ],
    ['an explicit ended_at wins', { status: 'DONE', ended_at: 'E' }, { ended_at: 'E' }],
    ['a heartbeat keeps ended_at null', { last_heartbeat: 'H' }, { ended_at: null, last_heartbeat: 'H' }],
    ['undefined fields are ignored', { pid: undefined, tool_calls: 3 }, { pid: 4242, tool_calls: 3 }],
    ['null clears', { pid: null }, { pid: null }],
  ])('applyStatePatch: %s', (_label, patch, expected) => {
    const next = applyStatePatch(state, patch, new Date('2025-11-22T15:00:00Z'));
    expect(next).toMatchObject({ ...expected, updated_at: '2025-11-22T15:00:00.000Z', schema_version: 1 });
  });

  it('applyStatePatch: a second terminal status keeps the first ended_at; resuming clears it', () => {
    const done = applyStatePatch(state, { status: 'REVIEW' }, new Date('2025-11-22T15:00:00Z'));
    const merged = applyStatePatch(done, { status: 'MERGED' }, new Date('2025-11-23T09:00:00Z'));
    expect(merged.ended_at).toBe('2025-11-22T15:00:00.000Z');
    expect(applyStatePatch(merged, { status: 'ACTIVE' }, NOW).ended_at).toBeNull();
  });

  it('applyStatePatch refuses a patch that breaks the shape (a bug, not user input)', () => {
    expect(() => applyStatePatch(state, { status: 'RUNNING' as RunStatus }, NOW)).toThrow(
      /invalid state patch .*"status" must be one of/,
    );
  });
});

describe('readMeta', () => {
  it('kept while its text stays the same: a changed file is read anew, and each read gets its own copy', () => {
    const dir = tempDir('agentbox-meta-');
    const file = path.join(dir, 'meta.yaml');
    const meta = sampleMeta();
    fs.writeFileSync(file, serializeMeta(meta));
    const first = readMeta(dir)!;
    expect(first).toEqual(meta);
    // A reader that changes its copy changes nobody else's.
    (first as { task: string }).task = 'changed';
    (first.tools_allowlist as string[]).push('Bash');
    expect(readMeta(dir)).toEqual(meta);
    // Replaced (a fetched group's run is rewritten): the new text is what is read.
    fs.writeFileSync(file, serializeMeta({ ...meta, task: 'another task' }));
    expect(readMeta(dir)?.task).toBe('another task');
    fs.rmSync(file);
    expect(readMeta(dir)).toBeUndefined();
  });
});
