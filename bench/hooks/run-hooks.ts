/** The run's --settings for a variant of the hooks bench, exactly as planLaunch builds them. */
import fs from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { Endpoint } from '../../src/endpoint/server.js';
import { hookAddressBook, runSettings } from '../../src/endpoint/settings.js';
import type { RunMeta } from '../../src/ledger/types.js';
import { planLaunch } from '../../src/run/begin/launch.js';
import { buildEnvelope } from '../../src/run/begin/tier.js';
import type { HookTable } from '../hooks-lib.js';
import { PROMPT, SUPERVISOR_TIMEOUT_MS } from './config.js';
import { BOX, RUN_ID, repo, runDir, runName, scopes } from './fixture.js';
import type { Variant } from './variants.js';

/** A run's meta as createRun writes it, enough for planLaunch. */
function runMeta(type: 'fix' | 'scout'): RunMeta {
  return {
    schema_version: 1,
    run_name: runName,
    run_id: RUN_ID,
    type,
    task: PROMPT,
    slug: 'bench-hooks',
    repo_root: repo.dir,
    repo_sha_start: null,
    created_at: new Date(0).toISOString(),
    agentbox_version: '0.0.0-bench',
    config_hash: 'bench',
    ...buildEnvelope({
      type,
      runId: RUN_ID,
      model: null,
      worktree: scopes[type].worktree,
      fixAllowed: [],
    }),
  };
}

/** The run's --settings for a variant, aimed at `endpoint`; deny rules left out (they are not hooks). */
export function runHooks(run: NonNullable<Variant['run']>, endpoint: Endpoint): HookTable {
  const scope = scopes[run.type];
  const guard = {
    ledgerDir: scope.ledgerDir,
    repoRoot: scope.repoRoot,
    writes: run.type === 'fix',
    // Every write tool goes through the guard, sandboxed or not (src/airlock/memory-links.ts).
    writeTools: true,
  };
  const hookFile = path.join(runDir, 'hook.json');
  fs.writeFileSync(hookFile, hookAddressBook(endpoint));
  const input = {
    endpointUrl: endpoint.url,
    token: endpoint.token,
    hookFile,
    deny: [],
    stopTimeoutSeconds: Math.ceil((SUPERVISOR_TIMEOUT_MS * 3) / 1000) + 30,
  };
  if (run.settings === 'every') {
    return runSettings({ ...input, guard: { ...guard, everyBashCall: true }, history: 'hooks' })
      .hooks as HookTable;
  }
  const hooks = launchHooks(run, endpoint, hookFile);
  // What the issue describes for this run, to be sure the bench measures that.
  const described = runSettings({ ...input, guard: { ...guard, everyBashCall: false }, history: 'stream' });
  if (!isDeepStrictEqual(hooks, described.hooks))
    throw new Error(
      `planLaunch's ${run.type} hooks are not runSettings(writes: ${guard.writes}, writeTools: ${guard.writeTools}, history: stream)`,
    );
  return hooks;
}

/** The hooks planLaunch gives a run of this type, aimed at `endpoint`. */
function launchHooks(run: NonNullable<Variant['run']>, endpoint: Endpoint, hookFile: string): HookTable {
  const scope = scopes[run.type];
  const { settings } = planLaunch({
    meta: runMeta(run.type),
    scope,
    runDir,
    launchDir: scope.worktree ?? scope.repoRoot,
    sessionId: '00000000-0000-4000-8000-000000000000',
    prompt: PROMPT,
    endpoint,
    secrets: {
      root: path.join(runDir, 'secrets'),
      settingsFile: path.join(runDir, 'settings.json'),
      hookFile,
      keyFile: path.join(runDir, 'secrets', 'model-key'),
    },
    // The hooks of a run with or without the sandbox; the sandbox block itself is measured on its own.
    sandbox: run.sandboxed ? BOX : null,
    supervisorTimeoutMs: SUPERVISOR_TIMEOUT_MS,
    parentEnv: {},
    envPass: [],
    // The project guard comes from the project's settings file (the variant's .claude/settings.json):
    // not added to the run's own again.
    projectSettings: true,
  });
  return (settings as { hooks: HookTable }).hooks;
}
