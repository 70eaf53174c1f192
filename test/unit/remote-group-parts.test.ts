import { describe, expect, it } from 'vitest';
import type { GroupMeta, GroupState } from '../../src/group/types.js';
import type { RunMeta } from '../../src/ledger/types.js';
import { importedMeta } from '../../src/remote/imported.js';
import {
  attemptMismatch,
  checkGroupPublication,
  importedGroupMeta,
  importedGroupState,
} from '../../src/remote/imported-group.js';
import { groupPublicationText } from '../../src/remote/publish-group.js';
import { isGroupFile } from '../../src/remote/refs.js';

/* What a group's publication must be to be fetched, and what it becomes here: pure. */

const NAME = '26-03-01_1000__make-x-right__abc123';
const R1 = '26-03-01_1000__make-x-right__111111';
const R2 = '26-03-01_1000__make-x-right__222222';
const C1 = '1'.repeat(40);
const C2 = '2'.repeat(40);

const META: GroupMeta = {
  schema_version: 1,
  group_name: NAME,
  group_id: 'abc123',
  type: 'fix',
  task: 'make x right',
  attempts: 2,
  models: null,
  max_parallel: 2,
  first_pass: false,
  max_cost_usd: null,
  repo_root: '/there',
  repo_sha_start: 'f'.repeat(40),
  created_at: '2026-03-01T10:00:00.000Z',
  agentbox_version: '0.1.0',
  run_options: { timeout_ms: 60_000, supervisor: 'rules', max_iterations: 50, model: null },
};
const STATE: GroupState = {
  schema_version: 1,
  status: 'ENDED',
  pid: 4242,
  pid_start: 'x',
  started_at: '2026-03-01T10:00:00.000Z',
  ended_at: '2026-03-01T10:05:00.000Z',
  updated_at: '2026-03-01T10:05:00.000Z',
  members: [
    { attempt: 1, run: R1, model: null },
    { attempt: 2, run: R2, model: null },
  ],
  halted: null,
  merged: null,
};
const MANIFEST = [
  { attempt: 1, run: R1, commit: C1 },
  { attempt: 2, run: R2, commit: C2 },
];

function files(over: { meta?: object; state?: object; manifest?: unknown } = {}) {
  const json = (v: unknown) => Buffer.from(JSON.stringify(v));
  return new Map([
    ['group.json', json({ ...META, ...over.meta })],
    ['state.json', json({ ...STATE, ...over.state })],
    [
      'publication.json',
      over.manifest === undefined
        ? Buffer.from(groupPublicationText('runner', '0.1.0', MANIFEST))
        : json({ schema_version: 1, host: 'runner', attempts: over.manifest }),
    ],
  ]);
}

describe("a group's publication, checked whole", () => {
  it('a whole one: its attempts with their commits, and who published it', () => {
    const plan = checkGroupPublication(NAME, files(), [C1, C2, '3'.repeat(40)]);
    expect(plan).toMatchObject({ host: 'runner', attempts: MANIFEST });
  });

  it('an attempt that never started (run null) needs no commit', () => {
    const state = { members: [STATE.members[0], { attempt: 2, run: null, model: null }] };
    const plan = checkGroupPublication(NAME, files({ state, manifest: [MANIFEST[0]] }), [C1]);
    expect(typeof plan).toBe('object');
  });

  it.each([
    ['not a group name', '../x', files(), [C1, C2], /not a group name/],
    [
      'group.json of another group',
      NAME,
      files({ meta: { group_name: R1 } }),
      [C1, C2],
      /names another group/,
    ],
    ['no group.json', NAME, new Map(), [C1, C2], /not a valid group file/],
    [
      'a member outside runs/',
      NAME,
      files({ state: { members: [{ attempt: 1, run: '../../etc', model: null }, STATE.members[1]] } }),
      [C1, C2],
      /a member names "\.\.\/\.\.\/etc": not a run name/,
    ],
    [
      'members not 1..N',
      NAME,
      files({ state: { members: [STATE.members[1], STATE.members[0]] } }),
      [C1, C2],
      /not attempts 1 to 2/,
    ],
    [
      'one run twice',
      NAME,
      files({ state: { members: [STATE.members[0], { attempt: 2, run: R1, model: null }] } }),
      [C1, C2],
      /the same run/,
    ],
    ['a missing attempt', NAME, files({ manifest: [MANIFEST[0]] }), [C1, C2], /attempt 2 .* partial/],
    ['a commit git did not bring', NAME, files(), [C1], /attempt 2 .* not in the publication/],
    [
      'another run under an attempt',
      NAME,
      files({ manifest: [MANIFEST[0], { ...MANIFEST[1], run: R1 }] }),
      [C1, C2],
      /attempt 2/,
    ],
    [
      'a commit that is not one',
      NAME,
      files({ manifest: [{ ...MANIFEST[0], commit: 'HEAD' }] }),
      [C1],
      /not one/,
    ],
    [
      'an attempt its members do not name',
      NAME,
      files({ manifest: [...MANIFEST, { attempt: 3, run: R1, commit: C1 }] }),
      [C1, C2],
      /do not name/,
    ],
    ['too many attempts', NAME, files({ meta: { attempts: 17 } }), [C1, C2], /17 attempts/],
    [
      'a merge of a run not a member',
      NAME,
      files({ state: { merged: { attempt: 1, run: '26-03-01_1000__x__333333', at: 'x' } } }),
      [C1, C2],
      /merged a run that is not a member/,
    ],
  ] as const)('refused: %s', (_, name, published, parents, why) => {
    const plan = checkGroupPublication(name, published, parents);
    expect(typeof plan).toBe('string');
    expect(plan).toMatch(why);
  });
});

describe('an attempt belongs to its group by its own meta.yaml', () => {
  const run = (group: unknown, type = 'fix') =>
    ({ run_name: R1, type, options: group === undefined ? {} : { group } }) as unknown as RunMeta;
  const own = { id: 'abc123', name: NAME, attempt: 1, attempts: 2 };
  it.each([
    ['its own', run(own), null],
    ['another group', run({ ...own, id: 'ffffff' }), /names another group/],
    ['another attempt', run({ ...own, attempt: 2 }), /names another group/],
    ['no group', run(undefined), /names another group/],
    ['another count', run({ ...own, attempts: 3 }), /another number/],
    ['a scout run', run(own, 'scout'), /not a fix run/],
  ] as const)('%s', (_, meta, why) => {
    const problem = attemptMismatch(meta, META, 1);
    if (why === null) expect(problem).toBeNull();
    else expect(problem).toMatch(why);
  });
});

describe('what a fetched group becomes here', () => {
  const locals = new Map([
    [R1, '26-03-01_1000__make-x-right__999999'],
    [R2, R2],
  ]);
  it('never ACTIVE, no pid, its members and merge under their names here', () => {
    const state = importedGroupState(
      { ...STATE, status: 'ACTIVE', merged: { attempt: 1, run: R1, at: 'then' } },
      locals,
    );
    expect(state).toMatchObject({ status: 'ENDED', pid: null, pid_start: null });
    expect(state.members.map((m) => m.run)).toEqual([locals.get(R1), R2]);
    expect(state.merged).toEqual({ attempt: 1, run: locals.get(R1), at: 'then' });
    expect(importedGroupState({ ...STATE, status: 'MERGED' }, locals).status).toBe('MERGED');
  });

  it('group.json under its name here, with where it came from', () => {
    const origin = { remote: 'origin', host: 'runner', run: NAME };
    const local = '26-03-01_1000__make-x-right__dddddd';
    expect(importedGroupMeta(META, local, origin)).toMatchObject({
      group_name: local,
      group_id: 'dddddd',
      origin,
    });
  });

  it("an attempt's meta.yaml names its group here; a run fetched without its group names none", () => {
    const remote = {
      run_name: R1,
      run_id: '111111',
      options: { push: true, group: { id: 'abc123', name: NAME, attempt: 1, attempts: 2 } },
    } as unknown as RunMeta;
    const origin = { remote: 'origin', host: 'runner', run: R1 };
    const group = { id: 'dddddd', name: '26-03-01_1000__make-x-right__dddddd' };
    expect(importedMeta(remote, R1, origin, group).options).toEqual({
      push: true,
      group: { ...group, attempt: 1, attempts: 2 },
    });
    expect(importedMeta(remote, R1, origin).options).toEqual({ push: true });
  });
});

describe('the files of a group that travel', () => {
  it.each([
    ['group.json', true],
    ['state.json', true],
    ['report.md', true],
    ['patches/agent_1.patch', true],
    ['patches/agent_2.patch', true],
    ['patches/agent_3.patch', false],
    ['patches/agent_0.patch', false],
    ['patches/../state.json', false],
    ['patches/agent_1.patch/x', false],
    ['../x', false],
    ['state.json.tmp', false],
    ['publication.json', false],
  ])('%j: %j', (file, travels) => {
    expect(isGroupFile(file, 2)).toBe(travels);
  });
});
