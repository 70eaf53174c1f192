import { describe, expect, it } from 'vitest';
import { renderFetch } from '../../src/commands/fetch.js';
import { isAgentboxError } from '../../src/errors.js';
import { isRunName } from '../../src/ledger/names.js';
import type { RunMeta, RunState } from '../../src/ledger/types.js';
import { parseBatch, parseTreeListing } from '../../src/remote/git.js';
import { candidateNames, importedMeta, importedState, pickName } from '../../src/remote/imported.js';
import {
  checkRemoteName,
  displayHost,
  fetchRefspecs,
  isPublished,
  pushRefspecs,
  safeEntryPath,
} from '../../src/remote/refs.js';

describe('which paths of a publication may become files in a run folder', () => {
  it.each([
    ['report.md', true],
    ['prompt/task.md', true],
    ['artifacts/notes/a b.md', true],
    ['raw/stream.jsonl', true],
    ['', false],
    ['/etc/passwd', false],
    ['../x', false],
    ['a/../../x', false],
    ['a/./x', false],
    ['a//x', false],
    ['a\\..\\x', false],
    ['a\nb', false],
    ['meta.yaml', false],
    ['state.json', false],
    ['state.json.1234', false],
    ['publication.json', false],
    // This machine's record of what its person was shown, in any spelling a file system takes as it.
    ['reviewed.jsonl', false],
    ['REVIEWED.jsonl', false],
    ['Reviewed.JSONL', false],
    ['reviewed.jsonl/x', false],
    ['State.json', false],
    ['meta.yaml/x', false],
    ['artifacts/reviewed.jsonl', true],
    ['x'.repeat(256), false],
  ])('%j → %s', (file, ok) => {
    expect(safeEntryPath(file)).toBe(ok);
  });

  it.each([
    ['raw/stream.jsonl', false, false],
    ['raw/stream.jsonl', true, true],
    ['meta.yaml', false, true],
    ['state.json', false, true],
    ['state.json.tmp-1', false, false],
    ['report.md', false, true],
  ])('publishes %j with raw=%s: %s', (file, raw, ok) => {
    expect(isPublished(file, raw)).toBe(ok);
  });
});

describe('remote names and refspecs', () => {
  it.each(['origin', 'team-ci', 'up_stream2'])('%j is a remote name', (name) => {
    expect(checkRemoteName(name)).toBe(name);
  });

  it.each(['', '../x', 'a/b', '-f', '--upload-pack=x', 'a b', 'a:b', 'x'.repeat(65)])(
    '%j is refused',
    (name) => {
      let error: unknown;
      try {
        checkRemoteName(name);
      } catch (e) {
        error = e;
      }
      expect(isAgentboxError(error) && error.code === 'USAGE').toBe(true);
    },
  );

  it('fetch mirrors runs and run branches under the remote; push never forces the ledger ref', () => {
    expect(fetchRefspecs('origin')).toEqual([
      '+refs/agentbox/runs/*:refs/agentbox/remotes/origin/runs/*',
      '+refs/heads/agentbox/*:refs/agentbox/remotes/origin/heads/*',
      '+refs/agentbox/groups/*:refs/agentbox/remotes/origin/groups/*',
    ]);
    expect(pushRefspecs('r', true)).toEqual([
      'refs/agentbox/runs/r:refs/agentbox/runs/r',
      '+refs/heads/agentbox/r:refs/heads/agentbox/r',
    ]);
    expect(pushRefspecs('r', false)).toEqual(['refs/agentbox/runs/r:refs/agentbox/runs/r']);
  });

  it.each([
    ['ci-runner-7', 'ci-runner-7'],
    ['evil\u001b[2J\nhost', 'evil[2Jhost'],
    ['', 'unknown'],
    [42, 'unknown'],
    ['h'.repeat(300), 'h'.repeat(100)],
  ])('a host %j is shown as %j', (given, shown) => {
    expect(displayHost(given)).toBe(shown);
  });
});

describe('the name a fetched run takes here', () => {
  const run = '26-03-01_1000__bump-x__abc123';

  it('its own first, then the same minute and slug with ids derived from the remote and the name', () => {
    const names = candidateNames(run, 'origin');
    expect(names[0]).toBe(run);
    expect(names).toHaveLength(9);
    expect(new Set(names).size).toBe(9);
    for (const name of names) {
      expect(isRunName(name)).toBe(true);
      expect(name.startsWith('26-03-01_1000__bump-x__')).toBe(true);
    }
    expect(candidateNames(run, 'origin')).toEqual(names);
    expect(candidateNames(run, 'upstream')[1]).not.toBe(names[1]);
  });

  it.each(['not-a-run', '../26-03-01_1000__x__abc123', ''])('%j has no candidates', (bad) => {
    expect(candidateNames(bad, 'origin')).toEqual([]);
  });

  it.each([
    [['free'], 0],
    [['same'], 0],
    [['taken', 'free'], 1],
    [['taken', 'taken', 'same'], 2],
    [['taken', 'taken'], null],
  ] as const)('occupants %j → candidate %s', (occupants, index) => {
    const names = occupants.map((_, i) => `n${i}`);
    const at = new Map(names.map((n, i) => [n, occupants[i]!]));
    expect(pickName(names, (n) => at.get(n)!)).toBe(index === null ? null : names[index]);
  });
});

describe('what is kept of a fetched run', () => {
  const meta = {
    run_name: 'r',
    run_id: 'abc123',
    type: 'fix',
    task: 'bump\nx',
    config_hash: 'h',
  } as unknown as RunMeta;
  const state = {
    schema_version: 1,
    status: 'REVIEW',
    pid: 1,
    pid_start: '5',
    claude_pid: 2,
    claude_pid_start: '6',
    session_id: 's',
    worktree_path: '/home/x/wt',
    branch: 'agentbox/r',
    started_at: 'a',
    ended_at: 'b',
    last_heartbeat: 'c',
    config_hash: 'other',
    failure: null,
    tool_calls: 3,
    updated_at: 'd',
    endpoint_url: 'http://127.0.0.1:1',
    socket_path: '/tmp/s',
    process_mark: 'm',
    launch_dir: '/home/x',
    checkpoint: { commit: 'c', head: 'h', at: 'a', iteration: 1 },
    result_commit: 'f'.repeat(40),
  } as RunState;

  it('its status, times and counts; nothing that names a process, a path or a commit there', () => {
    expect(importedState(state, meta)).toEqual({
      ...state,
      pid: null,
      pid_start: null,
      claude_pid: null,
      claude_pid_start: null,
      worktree_path: null,
      branch: null,
      endpoint_url: null,
      socket_path: null,
      process_mark: null,
      launch_dir: null,
      checkpoint: null,
      result_commit: null,
      config_hash: 'h',
      summary: { type: 'fix', task: 'bump x' },
      publication: null,
    });
  });

  it('who published it is what the git commit says, never what its state.json says', () => {
    const said = {
      commit: 'a'.repeat(40),
      author: 'Mallory <m@x>',
      committer: 'Mallory <m@x>',
      fetched_at: 'z',
    };
    const read = { commit: 'b'.repeat(40), author: 'Jane <j@x>', committer: 'CI <ci@x>', fetched_at: 't' };
    const hostile = { ...state, publication: said } as RunState;
    expect(importedState(hostile, meta).publication).toBeNull();
    expect(importedState(hostile, meta, 'ci', read).publication).toEqual(read);
  });

  it('meta.yaml under its name here, with where it came from', () => {
    const origin = { remote: 'origin', host: 'ci', run: 'r' };
    expect(importedMeta(meta, '26-03-01_1000__bump-x__def456', origin)).toMatchObject({
      run_name: '26-03-01_1000__bump-x__def456',
      run_id: 'def456',
      origin,
    });
  });
});

describe('parsing git plumbing output', () => {
  it('diff-tree --stdin listings, by tree', () => {
    const out = Buffer.from(
      'e t1\n:000000 100644 0000 aaa A\0report.md\0:000000 120000 0000 bbb A\0link\0' +
        'e t2\n:000000 100644 0000 ccc A\0dir/x y.md\0',
      'latin1',
    );
    expect(parseTreeListing(out)).toEqual(
      new Map([
        [
          't1',
          [
            { mode: '100644', blob: 'aaa', path: 'report.md' },
            { mode: '120000', blob: 'bbb', path: 'link' },
          ],
        ],
        ['t2', [{ mode: '100644', blob: 'ccc', path: 'dir/x y.md' }]],
      ]),
    );
  });

  it('cat-file --batch objects, binary and empty ones included, missing ones left out', () => {
    const out = Buffer.concat([
      Buffer.from('aaa blob 3\n'),
      Buffer.from([0, 10, 255]),
      Buffer.from('\nbbb missing\nccc blob 0\n\n'),
    ]);
    const objects = parseBatch(out);
    expect([...objects.keys()]).toEqual(['aaa', 'ccc']);
    expect(objects.get('aaa')).toEqual(Buffer.from([0, 10, 255]));
    expect(objects.get('ccc')?.length).toBe(0);
  });
});

describe('what fetch prints', () => {
  it('counts, the runs, and what to do next', () => {
    const text = renderFetch({
      remote: 'origin',
      published: 3,
      imported: ['a'],
      updated: ['b'],
      changed: [],
      kept: [],
      own: 1,
      skipped: [],
      refused_before: 0,
      groups: { published: 0, imported: [], updated: [], kept: [], own: 0, skipped: [], refused_before: 0 },
    });
    expect(text).toBe(
      'origin: 3 published run(s) — 1 new, 1 updated, 1 from this clone\n  new      a\n  updated  b\n' +
        '  next: agentbox status, agentbox show <id>, agentbox diff <id>\n',
    );
  });

  it('a publication that replaced a patch: said, with both hashes, and how to see it again', () => {
    const [a, b] = ['a'.repeat(64), 'b'.repeat(64)];
    const run = '26-03-01_1000__x__abc123';
    const text = renderFetch({
      remote: 'origin',
      published: 2,
      imported: [],
      updated: [run, 'c'],
      changed: [{ run, from: a, to: b }],
      kept: [],
      own: 0,
      skipped: [],
      refused_before: 0,
      groups: { published: 0, imported: [], updated: [], kept: [], own: 0, skipped: [], refused_before: 0 },
    });
    expect(text).toBe(
      'origin: 2 published run(s) — 0 new, 2 updated\n' +
        `  changed  ${run}: patch aaaaaaaaaaaa → bbbbbbbbbbbb, marked unreviewed\n  updated  c\n` +
        '  a changed patch is unreviewed: see it before you merge it: agentbox diff abc123\n' +
        '  next: agentbox status, agentbox show <id>, agentbox diff <id>\n',
    );
  });

  it('groups on a line of their own, when the remote publishes any', () => {
    const text = renderFetch({
      remote: 'origin',
      published: 2,
      imported: ['a1', 'a2'],
      updated: [],
      changed: [],
      kept: [],
      own: 0,
      skipped: [],
      refused_before: 0,
      groups: {
        published: 2,
        imported: ['g'],
        updated: [],
        kept: [],
        own: 0,
        skipped: [{ group: 'h', why: 'x' }],
        refused_before: 0,
      },
    });
    expect(text).toBe(
      'origin: 2 published run(s) — 2 new, 0 updated\n  new      a1\n  new      a2\n' +
        'origin: 2 published group(s) — 1 new, 0 updated, 1 not imported\n  new      g (group)\n' +
        '  next: agentbox status, agentbox show <id>, agentbox diff <id>\n',
    );
  });
});
