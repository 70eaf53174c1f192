import type { Config } from '../config/schema.js';
import { isAgentboxError } from '../errors.js';
import type { Repo } from '../git/repo.js';
import { probeVerifySandbox } from '../sandbox/available.js';
import { loadRunTemplates } from '../templates/load.js';
import { TEMPLATE_TYPES, templateDirs } from '../templates/locate.js';
import { loadReviseTemplate } from '../templates/revise.js';
import type { TrustEntry } from '../trust/index.js';
import type { Env } from '../util/env.js';
import type { CheckResult } from './checks.js';
import { untrustedRunsDetail } from './untrusted.js';

/**
 * Every run type's templates read and checked, as a run would before it starts; `interactive`'s
 * too (the first task of `agentbox start`), which has no output contract to count.
 */
export function checkTemplates(repo: Repo, env: Env, config: Config): CheckResult {
  const dirs = templateDirs(env, repo.root);
  let outputs = 0;
  for (const type of TEMPLATE_TYPES) {
    try {
      const t = loadRunTemplates(dirs, type, { builtinOutput: !config.supervisor.allow_raw_output });
      if (t.output && type !== 'interactive') outputs++;
      // A fix run's revisions (agentbox revise) get their message from the revise template.
      if (type === 'fix') loadReviseTemplate(dirs, type);
    } catch (error) {
      return {
        name: 'templates',
        ok: false,
        detail: error instanceof Error ? error.message : String(error),
        fix: isAgentboxError(error) && error.hint ? error.hint : 'fix or remove the template',
      };
    }
  }
  return {
    name: 'templates',
    ok: true,
    detail: `every run type's templates load (${outputs} with an output contract); see agentbox templates`,
  };
}

/**
 * runs.verify, when set, can run where fix runs do: in the sandbox runtime, which needs the
 * sandbox itself (the sandbox check) and, on Linux, ripgrep. Not run: the line says so.
 * `untrusted`: the repository's entries awaiting trust (untrustedRuns): a runs.verify among them is
 * said to be set, not "not set".
 */
export function checkVerify(
  env: Env,
  config: Config,
  sandboxWorks: boolean,
  untrusted: readonly TrustEntry[] = [],
): CheckResult {
  const command = config.runs.verify;
  const pending = untrusted.filter((e) => e.key === 'runs.verify');
  if (!command && pending.length > 0)
    return { name: 'verify', ok: false, skipped: true, detail: untrustedRunsDetail(pending) };
  if (!command) return { name: 'verify', ok: true, detail: 'runs.verify is not set: nothing to run' };
  if (config.sandbox.mode === 'off')
    return { name: 'verify', ok: true, detail: `"${command}" runs unsandboxed (sandbox.mode: off)` };
  if (!sandboxWorks)
    return { name: 'verify', ok: false, skipped: true, detail: 'needs the sandbox (see the sandbox check)' };
  const probe = probeVerifySandbox(env);
  return probe.ok
    ? { name: 'verify', ok: true, detail: `"${command}" can run in each fix run's sandbox (not run)` }
    : { name: 'verify', ok: false, detail: probe.problem, fix: probe.fix };
}
