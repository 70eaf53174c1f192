import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentboxError } from '../../src/errors.js';
import {
  createAtomicSync,
  writeAtomic,
  writeAtomicSync,
  writePersonFile,
  writeScratchSync,
} from '../../src/util/fs.js';
import { closest, editDistance } from '../../src/util/suggest.js';
import { FileTransaction } from '../../src/util/transaction.js';
import { snapshotTree, tempDir } from '../helpers/git-repo.js';

describe('editDistance', () => {
  it.each([
    ['', '', 0],
    ['', 'abc', 3],
    ['abc', '', 3],
    ['abc', 'abc', 0],
    ['kitten', 'sitting', 3],
    ['statsu', 'status', 2],
    ['jsn', 'json', 1],
    ['flaw', 'lawn', 2],
    ['Abc', 'abc', 1],
  ])('%j → %j is %i', (a, b, d) => {
    expect(editDistance(a, b)).toBe(d);
    expect(editDistance(b, a)).toBe(d);
  });
});

describe('closest', () => {
  const COMMANDS = ['init', 'uninstall', 'doctor', 'status', 'show'];
  it.each<[string, readonly string[], string | undefined]>([
    ['statsu', COMMANDS, 'status'],
    ['stauts', COMMANDS, 'status'],
    ['doctr', COMMANDS, 'doctor'],
    ['shw', COMMANDS, 'show'],
    ['STATUS', COMMANDS, 'status'],
    // A swap is two edits: too many for a four-letter word.
    ['inti', COMMANDS, undefined],
    ['merge', COMMANDS, undefined],
    ['xyz', COMMANDS, undefined],
    ['status', [], undefined],
    // Short words allow one edit; longer ones one per three letters.
    ['ab', ['xy'], undefined],
    ['ab', ['ax'], 'ax'],
    ['claude.bni', ['claude', 'claude.bin', 'claude.model'], 'claude.bin'],
    ['claude.mdl', ['claude', 'claude.bin', 'claude.model'], 'claude.model'],
    ['claude.binary', ['claude', 'claude.bin', 'claude.model'], 'claude.bin'],
    ['timeout', ['claude', 'claude.bin', 'claude.model'], undefined],
    // Ties go to the first candidate.
    ['sho', ['shoe', 'show'], 'shoe'],
  ])('%j among %j → %j', (word, candidates, expected) => {
    expect(closest(word, candidates)).toBe(expected);
  });
});

describe('atomic writes', () => {
  let dir: string;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('writeAtomic and writeAtomicSync replace a file whole, keep its mode, and leave no temp file', async () => {
    const file = path.join(dir, 'state.json');
    fs.writeFileSync(file, 'old', { mode: 0o640 });
    writeAtomicSync(file, Buffer.from([0, 1, 2]));
    expect([...fs.readFileSync(file)]).toEqual([0, 1, 2]);
    await writeAtomic(file, 'new\n');
    expect(fs.readFileSync(file, 'utf8')).toBe('new\n');
    expect(fs.statSync(file).mode & 0o777).toBe(0o640);
    writeAtomicSync(path.join(dir, 'secret'), 'x', 0o600);
    expect(fs.statSync(path.join(dir, 'secret')).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(dir).sort()).toEqual(['secret', 'state.json']);
  });

  it("writeAtomic gives a new file the mode asked for, else the umask's, and waits for nothing to be left", async () => {
    await writeAtomic(path.join(dir, 'key'), 'k', 0o600);
    expect(fs.statSync(path.join(dir, 'key')).mode & 0o777).toBe(0o600);
    await writeAtomic(path.join(dir, 'report.md'), 'r');
    expect(fs.statSync(path.join(dir, 'report.md')).mode & 0o777).toBe(0o666 & ~process.umask());
    // Many at once into one file: each whole, the last one's bytes there, no temp file left.
    await Promise.all(
      Array.from({ length: 20 }, (_, k) => writeAtomic(path.join(dir, 'report.md'), `${k}`.repeat(5000))),
    );
    expect(fs.readFileSync(path.join(dir, 'report.md'), 'utf8')).toMatch(/^(\d+)\1*$/);
    expect(fs.readdirSync(dir).sort()).toEqual(['key', 'report.md']);
  });

  it("writeAtomic replaces a link at the path, never what it names; writePersonFile follows it, keeping the target's mode", async () => {
    const outside = path.join(dir, 'bashrc');
    fs.writeFileSync(outside, 'mine\n', { mode: 0o600 });
    const link = path.join(dir, 'state.json');
    fs.symlinkSync(outside, link);
    await writeAtomic(link, '{}\n');
    expect(fs.readFileSync(outside, 'utf8')).toBe('mine\n');
    expect(fs.lstatSync(link).isFile()).toBe(true);
    expect(fs.readFileSync(link, 'utf8')).toBe('{}\n');

    const config = path.join(dir, 'config.yaml');
    fs.symlinkSync(outside, config);
    await writePersonFile(config, 'edited\n');
    expect(fs.lstatSync(config).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(outside, 'utf8')).toBe('edited\n');
    expect(fs.statSync(outside).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(dir).sort()).toEqual(['bashrc', 'config.yaml', 'state.json']);
  });

  it('a failed writeAtomic names the file and leaves nothing behind', async () => {
    fs.writeFileSync(path.join(dir, 'blocker'), 'a file');
    await expect(writeAtomic(path.join(dir, 'blocker', 'x'), 'x')).rejects.toThrow(
      `cannot write ${path.join(dir, 'blocker', 'x')}: ENOTDIR`,
    );
    // The rename fails (a folder is there): the temp file is removed.
    fs.mkdirSync(path.join(dir, 'folder'));
    fs.writeFileSync(path.join(dir, 'folder', 'inside'), 'kept');
    await expect(writeAtomic(path.join(dir, 'folder'), 'x')).rejects.toThrow(/cannot write .*folder/);
    expect(fs.readdirSync(dir).sort()).toEqual(['blocker', 'folder']);
    expect(fs.readFileSync(path.join(dir, 'folder', 'inside'), 'utf8')).toBe('kept');
  });

  it('a failed write names the file and changes nothing', () => {
    fs.writeFileSync(path.join(dir, 'blocker'), 'a file');
    expect(() => writeAtomicSync(path.join(dir, 'blocker', 'x'), 'x')).toThrow(
      `cannot write ${path.join(dir, 'blocker', 'x')}: ENOTDIR`,
    );
    expect(fs.readdirSync(dir)).toEqual(['blocker']);
  });

  it('writeScratchSync replaces a file whole like writeAtomicSync (only without waiting for the disk)', () => {
    const file = path.join(dir, 'settings.json');
    fs.writeFileSync(file, 'old', { mode: 0o640 });
    writeScratchSync(file, '{}\n');
    expect(fs.readFileSync(file, 'utf8')).toBe('{}\n');
    expect(fs.statSync(file).mode & 0o777).toBe(0o640);
    writeScratchSync(path.join(dir, 'hook.json'), 'x', 0o600);
    expect(fs.statSync(path.join(dir, 'hook.json')).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(dir).sort()).toEqual(['hook.json', 'settings.json']);
    expect(() => writeScratchSync(path.join(dir, 'hook.json', 'x'), 'x')).toThrow(/cannot write .*ENOTDIR/);
    // A link at the path is replaced, never followed (a run's slash command planted as a link).
    fs.writeFileSync(path.join(dir, 'mine'), 'mine\n');
    fs.symlinkSync(path.join(dir, 'mine'), path.join(dir, 'scout.md'));
    writeScratchSync(path.join(dir, 'scout.md'), 'command\n');
    expect(fs.readFileSync(path.join(dir, 'mine'), 'utf8')).toBe('mine\n');
    expect(fs.lstatSync(path.join(dir, 'scout.md')).isFile()).toBe(true);
    expect(fs.readdirSync(dir).sort()).toEqual(['hook.json', 'mine', 'scout.md', 'settings.json']);
  });

  it('createAtomicSync writes only where nothing is, and never replaces', () => {
    const file = path.join(dir, 'report.md');
    expect(createAtomicSync(file, 'first\n')).toBe(true);
    expect(createAtomicSync(file, 'second\n')).toBe(false);
    expect(fs.readFileSync(file, 'utf8')).toBe('first\n');
    expect(fs.readdirSync(dir)).toEqual(['report.md']);
    expect(() => createAtomicSync(path.join(dir, 'report.md', 'x'), 'x')).toThrow(/cannot write .*ENOTDIR/);
    expect(fs.readdirSync(dir)).toEqual(['report.md']);
  });
});

describe('FileTransaction', () => {
  let dir: string;
  beforeEach(() => {
    dir = tempDir();
  });
  const at = (...parts: string[]) => path.join(dir, ...parts);
  const seed = () => {
    fs.writeFileSync(at('kept.txt'), 'old kept\n');
    fs.writeFileSync(at('gone.txt'), 'old gone\n');
    fs.mkdirSync(at('empty'));
    fs.writeFileSync(at('blocker'), 'a regular file, not a folder\n');
  };

  it('does every step and lists what it changed', () => {
    seed();
    const result = FileTransaction.run((tx) => {
      tx.write(at('kept.txt'), 'new kept\n');
      tx.write(at('a/b/new.txt'), 'new\n');
      tx.remove(at('gone.txt'));
      expect(tx.removeEmptyDir(at('empty'))).toBe(true);
      return tx.changed;
    });
    expect(result).toEqual([
      at('kept.txt'),
      at('a'),
      at('a/b'),
      at('a/b/new.txt'),
      at('gone.txt'),
      at('empty'),
    ]);
    expect(snapshotTree(dir)).toEqual(
      new Map([
        ['a/', expect.stringMatching(/^dir /)],
        ['a/b/', expect.stringMatching(/^dir /)],
        ['a/b/new.txt', Buffer.from('new\n').toString('base64')],
        ['blocker', Buffer.from('a regular file, not a folder\n').toString('base64')],
        ['kept.txt', Buffer.from('new kept\n').toString('base64')],
      ]),
    );
  });

  it.each([
    [
      'writing into a path whose parent is a regular file',
      'blocker/x.txt',
      // The temp file's name (write-file-atomic's) ends the message.
      (file: string) => `cannot write ${file}: ENOTDIR: not a directory, open '${file}.`,
    ],
    [
      'creating a folder under a regular file',
      'blocker/sub/x.txt',
      (file: string) =>
        `cannot create the folder ${path.dirname(file)}: ENOTDIR: not a directory, mkdir '${path.dirname(file)}'`,
    ],
  ])('undoes every earlier step when %s fails', (_name, target, message) => {
    seed();
    const before = snapshotTree(dir);
    let error: unknown;
    try {
      FileTransaction.run((tx) => {
        tx.write(at('kept.txt'), 'new kept\n');
        tx.write(at('a/b/new.txt'), 'new\n');
        tx.remove(at('gone.txt'));
        tx.removeEmptyDir(at('empty'));
        tx.write(at(target), 'x');
        throw new Error('not reached');
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(AgentboxError);
    expect((error as AgentboxError).code).toBe('IO_FAILED');
    expect((error as AgentboxError).message.startsWith(message(at(target)))).toBe(true);
    // Files back, created folders gone, removed folder back, no temp file left behind.
    expect(snapshotTree(dir)).toEqual(before);
  });

  it('rethrows the work’s own error after rolling back', () => {
    seed();
    const before = snapshotTree(dir);
    const boom = new Error('boom');
    expect(() =>
      FileTransaction.run((tx) => {
        tx.write(at('new/file.txt'), 'x');
        throw boom;
      }),
    ).toThrow(boom);
    expect(snapshotTree(dir)).toEqual(before);
  });

  it('skips a write that changes nothing, and a remove of a missing file', () => {
    seed();
    const changed = FileTransaction.run((tx) => {
      tx.write(at('kept.txt'), 'old kept\n');
      tx.remove(at('missing.txt'));
      expect(tx.removeEmptyDir(at('missing-dir'))).toBe(false);
      expect(tx.removeEmptyDir(dir)).toBe(false);
      return tx.changed;
    });
    expect(changed).toEqual([]);
  });

  it('a second rollback does nothing', () => {
    seed();
    const tx = new FileTransaction();
    tx.write(at('kept.txt'), 'new kept\n');
    tx.rollback();
    fs.writeFileSync(at('kept.txt'), 'edited after the rollback\n');
    tx.rollback();
    expect(fs.readFileSync(at('kept.txt'), 'utf8')).toBe('edited after the rollback\n');
  });
});
