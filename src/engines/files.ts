import path from 'node:path';
import { AgentboxError } from '../errors.js';
import type { SetupStep } from '../setup/plan.js';
import { readRepoText } from '../util/fs.js';
import { githubWorkflow } from './github.js';
import { GITLAB_JOB_FILE, gitlabJob, gitlabRoot } from './gitlab.js';
import { recordedSource } from './source.js';

export const CI_PLATFORMS = ['github', 'gitlab'] as const;
export type CiPlatform = (typeof CI_PLATFORMS)[number];

export const GITHUB_WORKFLOW_FILE = '.github/workflows/agentbox.yml';

export interface CiPlan {
  readonly steps: readonly SetupStep[];
  /** What the person still has to do by hand (an include in their own .gitlab-ci.yml). */
  readonly notes: readonly string[];
}

/** The files `agentbox init --ci <platform>` writes, relative to the repository root. Pure. */
export function ciFiles(
  platform: CiPlatform,
  version: string,
  source: string,
  hasRoot: boolean,
): Record<string, string> {
  if (platform === 'github') return { [GITHUB_WORKFLOW_FILE]: githubWorkflow(version, source) };
  return {
    [GITLAB_JOB_FILE]: gitlabJob(version, source),
    ...(hasRoot ? {} : { '.gitlab-ci.yml': gitlabRoot() }),
  };
}

export function checkPlatform(platform: string): CiPlatform {
  if (!CI_PLATFORMS.includes(platform as CiPlatform)) {
    throw new AgentboxError('USAGE', `invalid --ci "${platform}"`, {
      hint: `use one of: ${CI_PLATFORMS.join(', ')}`,
    });
  }
  return platform as CiPlatform;
}

/** The install source the platform's file, written by an earlier init, records (kept on a re-run). */
export function sourceRecordedIn(root: string, platform: CiPlatform): string | undefined {
  const rel = platform === 'github' ? GITHUB_WORKFLOW_FILE : GITLAB_JOB_FILE;
  return recordedSource(readRepoText(path.join(root, rel), root));
}

/**
 * What `init --ci` must write: files that are missing, and with --force files that differ. A
 * file that differs without --force is an error before anything is written; an identical one is
 * nothing to do, so a second init changes no byte.
 */
export function planCi(
  root: string,
  platform: CiPlatform,
  install: { readonly version: string; readonly source: string },
  force: boolean,
): CiPlan {
  const rootCi = readRepoText(path.join(root, '.gitlab-ci.yml'), root);
  const files = ciFiles(platform, install.version, install.source, rootCi !== undefined);
  const steps: SetupStep[] = [];
  for (const [rel, content] of Object.entries(files)) {
    const file = path.join(root, rel);
    const existing = readRepoText(file, root);
    if (existing === content) continue;
    if (existing !== undefined && !force) {
      throw new AgentboxError(
        'PATH_EXISTS',
        `${rel} already exists and is not the one agentbox would write`,
        {
          hint: `nothing was changed. Compare, then replace it: agentbox init --ci ${platform} --force`,
        },
      );
    }
    steps.push({
      kind: 'write',
      path: file,
      content,
      summary: `${existing === undefined ? 'wrote' : 'replaced'} ${rel}`,
    });
  }
  const included = rootCi === undefined || rootCi.includes(GITLAB_JOB_FILE);
  const notes =
    platform === 'gitlab' && !included
      ? [`add to your .gitlab-ci.yml:\n    include:\n      - local: ${GITLAB_JOB_FILE}`]
      : [];
  return { steps, notes };
}
