import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AgentboxError } from '../../src/errors.js';
import { attemptPatchPath, keepAttemptPatch, keepMissingPatch } from '../../src/group/patches.js';
import { createGroup } from '../../src/group/store.js';
import { tempDir } from '../helpers/git-repo.js';
import { ledgerRepo } from './fixtures/ledger.js';

async function group() {
  const { ledger } = ledgerRepo();
  const g = await createGroup(ledger, {
    task: 'fix the login',
    attempts: 3,
    models: null,
    maxParallel: 3,
    firstPass: false,
    maxCostUsd: null,
    runOptions: { timeout_ms: 60_000, supervisor: 'rules', max_iterations: 50, model: null },
    repoShaStart: 'abc',
  });
  return { ledger, g };
}

describe('keepAttemptPatch', () => {
  it("copies an attempt's changes.patch to patches/agent_<k>.patch; the last end wins", async () => {
    const { ledger, g } = await group();
    const runDir = tempDir();
    fs.writeFileSync(path.join(runDir, 'changes.patch'), 'diff --git a/x b/x\n');
    const kept = await keepAttemptPatch(ledger, g.name, 2, runDir);
    expect(kept).toBe(path.join(g.dir, 'patches', 'agent_2.patch'));
    expect(fs.readFileSync(kept, 'utf8')).toBe('diff --git a/x b/x\n');
    fs.writeFileSync(path.join(runDir, 'changes.patch'), 'diff --git a/y b/y\n');
    await keepAttemptPatch(ledger, g.name, 2, runDir);
    expect(fs.readFileSync(kept, 'utf8')).toBe('diff --git a/y b/y\n');
    // keepMissingPatch leaves a kept patch as it is.
    fs.writeFileSync(path.join(runDir, 'changes.patch'), 'later\n');
    expect(await keepMissingPatch(ledger, g.name, 2, runDir)).toBeNull();
    expect(fs.readFileSync(kept, 'utf8')).toBe('diff --git a/y b/y\n');
    expect(await keepMissingPatch(ledger, g.name, 3, runDir)).toBe(attemptPatchPath(ledger, g.name, 3));
  });

  it('an attempt that changed nothing gets an empty patch', async () => {
    const { ledger, g } = await group();
    const kept = await keepAttemptPatch(ledger, g.name, 1, tempDir());
    expect(fs.readFileSync(kept, 'utf8')).toBe('');
  });

  it('never follows a link in the run folder', async () => {
    const { ledger, g } = await group();
    const runDir = tempDir();
    const secret = path.join(tempDir(), 'secret');
    fs.writeFileSync(secret, 'SECRET\n');
    fs.symlinkSync(secret, path.join(runDir, 'changes.patch'));
    const kept = await keepAttemptPatch(ledger, g.name, 1, runDir);
    expect(fs.readFileSync(kept, 'utf8')).toBe('');
  });

  it("never writes through a link in the group's folder", async () => {
    const { ledger, g } = await group();
    const elsewhere = tempDir();
    fs.symlinkSync(elsewhere, path.join(g.dir, 'patches'));
    await expect(keepAttemptPatch(ledger, g.name, 1, tempDir())).rejects.toThrow('is not a folder');
    expect(fs.readdirSync(elsewhere)).toEqual([]);
  });

  it.each<[string, string, number]>([
    ['a group name that climbs out', '../../../tmp/x', 1],
    ['a path as a group', '/etc', 1],
    ['attempt 0', '26-01-02_0304__fix__0a1b2c', 0],
    ['a fractional attempt', '26-01-02_0304__fix__0a1b2c', 1.5],
  ])('refuses %s', async (_what, name, k) => {
    const { ledger } = await group();
    await expect(keepAttemptPatch(ledger, name, k, tempDir())).rejects.toBeInstanceOf(AgentboxError);
  });
});
