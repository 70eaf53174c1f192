/**
 * The hooks bench's fixture, built when this module is first imported: the main repository with
 * its ledger, a fix run's worktree outside it (the default layout), a Claude home, the scripted
 * model server, the run folder, and the tool mixes and probes. Each piece registers its removal.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { AirlockScope } from '../../src/airlock/guard.js';
import { canonical, isInside } from '../../src/airlock/paths.js';
import { EventLog } from '../../src/ledger/events.js';
import type { RunSandbox } from '../../src/sandbox/prepare.js';
import { sandboxSettings } from '../../src/sandbox/settings.js';
import { GUARD_GROUP } from '../../src/settings/managed.js';
import { claudeHome } from '../../test/helpers/claude.js';
import { gitRepo, tempDir } from '../../test/helpers/git-repo.js';
import type { Call, HookTable } from '../hooks-lib.js';
import { live, undo } from './cleanup.js';
import { startModelChild } from './model-server.js';
import type { Mix } from './variants.js';

export const repo = gitRepo({ files: { 'a.txt': 'hello from a.txt\n' } });
undo.push(() => repo.cleanup());
const worktreeParent = tempDir('agentbox-worktree-');
undo.push(() => fs.rmSync(worktreeParent, { recursive: true, force: true }));
export const worktree = canonical(path.join(worktreeParent, 'bench-run'));
repo.git('worktree', 'add', '--quiet', '-b', 'agentbox/bench-hooks', worktree);
export const home = claudeHome();
undo.push(() => home.cleanup());
export const server = await startModelChild();
live.closeModel = server.close;
export const guardFile = path.join(worktree, '.claude', 'settings.json');
export const projectHooks = { PreToolUse: [GUARD_GROUP] } as unknown as HookTable;
export const guardJson = `${JSON.stringify({ hooks: projectHooks }, null, 2)}\n`;
export const ledgerDir = path.join(repo.dir, '.agents');
export const RUN_ID = 'abc123';
export const runName = `2025-01-01-0000-bench-hooks-${RUN_ID}`;
export const runDir = path.join(ledgerDir, 'runs', runName);
fs.mkdirSync(path.join(runDir, 'raw'), { recursive: true });
export const log = new EventLog(runDir);
export const scopes: Record<'fix' | 'scout', AirlockScope> = {
  fix: {
    type: 'fix',
    repoRoot: canonical(repo.dir),
    ledgerDir: canonical(ledgerDir),
    runDir: canonical(runDir),
    worktree,
  },
  scout: {
    type: 'scout',
    repoRoot: canonical(repo.dir),
    ledgerDir: canonical(ledgerDir),
    runDir: canonical(runDir),
    worktree: null,
  },
};
if (isInside(worktree, repo.dir)) throw new Error('the worktree must lie outside the repository');

/** What a fix run's sandbox fences (src/sandbox/prepare.ts), for planLaunch and the sandbox figure. */
export const BOX: RunSandbox = {
  gitDir: path.join(runDir, 'git'),
  tmpDir: path.join(runDir, 'tmp'),
  gitConfig: path.join(runDir, 'gitconfig'),
  listed: [],
  sockDir: path.join(runDir, 's'),
  mainGitDir: path.join(repo.dir, '.git'),
  mainTree: repo.dir,
  denyRead: [],
  allowRead: [],
  runtimeWritable: [],
  allowedDomains: [],
};

/** Claude Code's sandbox as a fix run gets it (src/sandbox/settings.ts), for its own figure. */
export const SANDBOX_BLOCK = sandboxSettings({
  writable: [worktree, BOX.gitDir!, BOX.tmpDir],
  denyWrite: [BOX.mainGitDir],
  denyRead: [canonical(ledgerDir)],
  allowRead: [],
  autoAllowBash: true,
  allowedDomains: [],
});
fs.mkdirSync(BOX.tmpDir, { recursive: true });

export const MIXES: readonly Mix[] = [
  {
    name: 'Bash',
    call: () => ({ tool: 'Bash', input: { command: 'true', description: 'scripted' } }),
    allowedTools: 'Bash,Read',
  },
  {
    name: 'Read',
    call: () => ({ tool: 'Read', input: { file_path: path.join(worktree, 'a.txt') } }),
    allowedTools: 'Bash,Read',
  },
  {
    name: 'Write',
    call: (n) => ({
      tool: 'Write',
      input: { file_path: path.join(worktree, `w-${n}.txt`), content: `w ${n}\n` },
    }),
    allowedTools: 'Bash,Read,Write,Edit',
  },
];
/**
 * Calls the hooks' `if` conditions are meant to catch (the mixes catch none), for the preflight:
 * Bash naming agentbox (run); naming .agents (project guard and run: the guard lets it through, the
 * fix run's airlock too as it resolves into the worktree, the scout's refuses it); naming the main
 * tree (a fix run's hook, which refuses it; the temp path also names agentbox, so a fix run's Bash
 * hooks fire twice there and a scout's once); a Read inside the ledger (the run's own folder: allowed).
 */
const probeFile = path.join(runDir, 'probe.txt');
fs.writeFileSync(probeFile, 'probe\n');
export const PROBES: readonly Call[] = [
  { tool: 'Bash', input: { command: 'echo agentbox-probe', description: 'probe' } },
  { tool: 'Bash', input: { command: 'echo .agents-probe', description: 'probe' } },
  { tool: 'Bash', input: { command: `echo ${path.join(repo.dir, 'README.md')}`, description: 'probe' } },
  { tool: 'Read', input: { file_path: probeFile } },
];
