import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isAgentboxError } from '../../src/errors.js';
import { configHash, ensureLedger, openLedger, readState } from '../../src/ledger/index.js';
import { parseIndexLine } from '../../src/ledger/index-log.js';
import { parseMeta, writeMetaOnce } from '../../src/ledger/meta.js';
import { agentbox } from '../helpers/cli.js';
import { gitRepo, snapshotTree } from '../helpers/git-repo.js';
import { create, ENVELOPE, errorOf, idSequence, ledgerRepo, scratchDir } from './fixtures/ledger.js';

const lines = (file: string) => fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);

describe('ensureLedger / openLedger', () => {
  it('creates the folders and index files once, then has nothing to do', () => {
    const root = scratchDir();
    expect(ensureLedger(root).created).toEqual([
      '.agents/',
      '.agents/runs/',
      '.agents/pointers/',
      '.agents/INDEX.jsonl',
      '.agents/INDEX.md',
    ]);
    const before = snapshotTree(root);
    expect(ensureLedger(root).created).toEqual([]);
    expect(snapshotTree(root)).toEqual(before);
    expect(fs.readFileSync(path.join(root, '.agents/INDEX.jsonl'), 'utf8')).toBe('');
  });

  it('only adds what is missing', () => {
    const root = scratchDir();
    ensureLedger(root);
    fs.rmSync(path.join(root, '.agents/pointers'), { recursive: true });
    fs.writeFileSync(path.join(root, '.agents/INDEX.jsonl'), 'kept\n');
    expect(ensureLedger(root).created).toEqual(['.agents/pointers/']);
    expect(fs.readFileSync(path.join(root, '.agents/INDEX.jsonl'), 'utf8')).toBe('kept\n');
  });

  it('refuses a file where .agents/ should be', () => {
    const root = scratchDir();
    fs.writeFileSync(path.join(root, '.agents'), 'x');
    const error = (() => {
      try {
        ensureLedger(root);
      } catch (e) {
        return e;
      }
    })();
    expect(isAgentboxError(error) && error.code).toBe('IO_FAILED');
    expect((error as Error).message).toBe(`${root}/.agents exists but is not a folder`);
  });

  it('openLedger says how to set up when init never ran', () => {
    const root = scratchDir();
    expect(() => openLedger(root)).toThrow(`agentbox is not set up in ${root} — run "agentbox init"`);
    fs.mkdirSync(path.join(root, '.agents'));
    expect(() => openLedger(root)).toThrow(/not set up/);
  });
});

describe('a ledger folder that is a file (found by a user’s eye: status said "not set up", init "already set up")', () => {
  it('every command, init and doctor name the folder and how to go on; init writes nothing', async () => {
    const repo = gitRepo();
    const env = { PATH: process.env.PATH, HOME: repo.dir };
    expect((await agentbox(['init'], { cwd: repo.dir, env })).code).toBe(0);
    const runs = path.join(repo.dir, '.agents', 'runs');
    fs.rmSync(runs, { recursive: true });
    fs.writeFileSync(runs, 'junk\n');
    const said = `${runs} is not a folder: the run ledger is damaged`;
    expect(() => openLedger(repo.dir)).toThrow(said);
    for (const command of [['status'], ['show', 'latest'], ['init']]) {
      const result = await agentbox(command, { cwd: repo.dir, env });
      expect(result.code, command.join(' ')).toBe(1);
      expect(result.stderr, command.join(' ')).toContain(said);
      expect(result.stderr).toContain(`mv ${runs} ${runs}.damaged`);
    }
    expect(fs.readFileSync(runs, 'utf8')).toBe('junk\n');
    const doctor = await agentbox(['doctor'], { cwd: repo.dir, env });
    expect(doctor.stdout).toMatch(new RegExp(`✗ ledger +${said.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    // Moved aside, init makes the folder again.
    fs.renameSync(runs, `${runs}.damaged`);
    expect((await agentbox(['init'], { cwd: repo.dir, env })).code).toBe(0);
    expect(fs.statSync(runs).isDirectory()).toBe(true);
    repo.cleanup();
  });
});

describe('createRun', () => {
  it('writes the folder, meta.yaml, state.json, an INDEX event, INDEX.md and latest', async () => {
    const { ledger } = ledgerRepo();
    const run = await create(ledger, 'Fix the "login" bug; rm -rf ~', '2025-11-22T14:30:12.345Z', {
      type: 'fix',
      ids: idSequence('a1b2c3'),
    });
    expect(run.name).toBe('25-11-22_1430__fix-the-login-bug-rm-rf__a1b2c3');
    expect(run.id).toBe('a1b2c3');
    expect(run.dir).toBe(path.join(ledger.runsDir, run.name));
    expect(fs.readdirSync(run.dir).sort()).toEqual(['meta.yaml', 'raw', 'state.json']);
    const meta = parseMeta(fs.readFileSync(path.join(run.dir, 'meta.yaml'), 'utf8'), 'meta.yaml');
    expect(meta).toEqual(run.meta);
    expect(meta).toMatchObject({ run_name: run.name, run_id: 'a1b2c3', type: 'fix', repo_root: ledger.root });
    expect(meta.config_hash).toBe(configHash(ENVELOPE));
    expect(readState(run.dir)).toEqual(run.state);
    expect(run.state).toMatchObject({ status: 'ACTIVE', started_at: '2025-11-22T14:30:12.345Z', pid: null });
    const [line, ...rest] = lines(ledger.indexJsonl);
    expect(rest).toEqual([]);
    expect(parseIndexLine(line!)).toMatchObject({
      run: run.name,
      event: 'created',
      status: 'ACTIVE',
      type: 'fix',
    });
    expect(fs.readFileSync(ledger.indexMd, 'utf8')).toContain(
      `| [${run.name}](runs/${run.name}/) | fix | ACTIVE |`,
    );
    expect(fs.readlinkSync(ledger.latest)).toBe(`runs/${run.name}`);
  });

  it('never rewrites meta.yaml', async () => {
    const { ledger } = ledgerRepo();
    const run = await create(ledger, 'x', '2025-11-22T14:30:00Z');
    const before = fs.readFileSync(path.join(run.dir, 'meta.yaml'), 'utf8');
    expect(() => writeMetaOnce(run.dir, { ...run.meta, task: 'changed' })).toThrow(
      /cannot create .*meta.yaml/,
    );
    expect(fs.readFileSync(path.join(run.dir, 'meta.yaml'), 'utf8')).toBe(before);
  });

  it('retries with a new id when the name is taken (same minute, same slug)', async () => {
    const { ledger } = ledgerRepo();
    const first = await create(ledger, 'same task', '2025-11-22T14:30:00Z', { ids: idSequence('aaaaaa') });
    const second = await create(ledger, 'same task', '2025-11-22T14:30:30Z', {
      ids: idSequence('aaaaaa', 'bbbbbb'),
    });
    expect(first.name).toBe('25-11-22_1430__same-task__aaaaaa');
    expect(second.name).toBe('25-11-22_1430__same-task__bbbbbb');
  });

  it('keeps short ids unique across the ledger even when the names differ', async () => {
    const { ledger } = ledgerRepo();
    await create(ledger, 'one task', '2025-01-01T00:00:00Z', { ids: idSequence('cccccc') });
    const second = await create(ledger, 'another task', '2025-11-22T14:30:00Z', {
      ids: idSequence('cccccc', 'dddddd'),
    });
    expect(second.id).toBe('dddddd');
    expect(fs.readdirSync(ledger.runsDir).sort()).toEqual([
      '25-01-01_0000__one-task__cccccc',
      '25-11-22_1430__another-task__dddddd',
    ]);
  });

  it('gives up after a bounded number of attempts and leaves nothing behind', async () => {
    const { repo, ledger } = ledgerRepo();
    await create(ledger, 'taken', '2025-11-22T14:30:00Z', { ids: idSequence('eeeeee') });
    const before = snapshotTree(repo.dir);
    let calls = 0;
    const error = await errorOf(() =>
      create(ledger, 'taken', '2025-11-22T14:30:00Z', {
        ids: () => {
          calls++;
          return 'eeeeee';
        },
      }),
    );
    expect(isAgentboxError(error) && error.code).toBe('IO_FAILED');
    expect((error as Error).message).toMatch(/could not claim a free run name .* after 16 attempts/);
    expect(calls).toBe(16);
    expect(snapshotTree(repo.dir)).toEqual(before);
  });

  it('says NOT_INITIALIZED when runs/ disappeared', async () => {
    const { ledger } = ledgerRepo();
    fs.rmSync(ledger.runsDir, { recursive: true });
    const error = await errorOf(() => create(ledger, 'x', '2025-11-22T14:30:00Z'));
    expect(isAgentboxError(error) && error.code).toBe('NOT_INITIALIZED');
  });
});
