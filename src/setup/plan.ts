import fs from 'node:fs';
import path from 'node:path';
import { projectConfigPath, readConfigFile } from '../config/load.js';
import { PROJECT_CONFIG_TEMPLATE } from '../config/template.js';
import { AgentboxError } from '../errors.js';
import {
  addIgnoreBlock,
  blockPatterns,
  type IgnoreRule,
  ignoreFilePath,
  LEDGER_IGNORES,
  removeIgnoreBlock,
  unignored,
} from '../git/ignore.js';
import type { Repo } from '../git/repo.js';
import { ledgerPaths, notAFolder, renderIndexMd } from '../ledger/index.js';
import { readSettings, type SettingsScope, settingsPath } from '../settings/file.js';
import { type InstallPlan, planInstall } from '../settings/managed.js';
import { validateSettings } from '../settings/validate.js';
import { readRepoText, readTextIfExists } from '../util/fs.js';

export interface SetupStep {
  readonly kind: 'mkdir' | 'write';
  readonly path: string;
  readonly content?: string;
  /** What the user is told, e.g. "created .agents/ (run ledger)". */
  readonly summary: string;
}

export interface SetupPlan {
  readonly steps: readonly SetupStep[];
  readonly settings: InstallPlan;
  readonly settingsFile: string;
}

/**
 * Everything `init` will do, computed before anything is written: every parse and validation
 * error surfaces here, while the disk is still untouched.
 */
export async function planSetup(repo: Repo, scope: SettingsScope): Promise<SetupPlan> {
  const root = repo.root;
  const rel = (p: string) => path.relative(root, p) || '.';
  const settingsFile = settingsPath(root, scope);
  const settingsPlan = planSettings(settingsFile);
  const configFile = projectConfigPath(root);
  // An existing config must be valid before init builds on it.
  readConfigFile(configFile, root);

  const steps: SetupStep[] = [...ledgerSteps(root, rel), ...(await ignoreSteps(repo, scope, rel))];
  if (settingsPlan.changed) {
    const what = [
      ...(settingsPlan.addedDeny.length > 0 ? [`${settingsPlan.addedDeny.length} deny rule(s)`] : []),
      ...settingsPlan.addedHooks.map((e) => `the ${e} guard hook`),
    ];
    steps.push({
      kind: 'write',
      path: settingsFile,
      content: settingsPlan.text,
      summary: `installed ${what.length > 0 ? what.join(' and ') : 'the agentbox record'} in ${rel(settingsFile)}`,
    });
  }
  if (!fs.existsSync(configFile)) {
    steps.push({
      kind: 'write',
      path: configFile,
      content: PROJECT_CONFIG_TEMPLATE,
      summary: `wrote ${rel(configFile)} (project config, every key commented)`,
    });
  }
  return { steps, settings: settingsPlan, settingsFile };
}

/** The settings file with agentbox's entries, refused when Claude Code would not accept the result. */
function planSettings(settingsFile: string): InstallPlan {
  // `.claude` as a file: the write failed on a temp name (ENOTDIR), with no word on what to do.
  const folder = path.dirname(settingsFile);
  const stat = fs.statSync(folder, { throwIfNoEntry: false });
  if (stat && !stat.isDirectory())
    throw new AgentboxError(
      'SETTINGS_BAD_SHAPE',
      `${folder} is not a folder: Claude Code's project settings go in ${settingsFile}`,
      {
        hint: `look at it, move it aside (mv ${folder} ${folder}.file), then agentbox init again: nothing was written`,
      },
    );
  const settings = readSettings(settingsFile);
  const settingsPlan = planInstall(settings.text, settings.value);
  const issues = validateSettings(JSON.parse(settingsPlan.text));
  if (issues.length > 0) {
    const first = issues[0]!;
    throw new AgentboxError('SETTINGS_BAD_SHAPE', `${settingsFile}: ${first.path} ${first.message}`, {
      hint: 'Claude Code ignores the whole file while one entry is invalid; fix it by hand and run "agentbox init" again',
    });
  }
  return settingsPlan;
}

/** The ledger's folders and index files that do not exist yet. */
function ledgerSteps(root: string, rel: (p: string) => string): SetupStep[] {
  const steps: SetupStep[] = [];
  const ledger = ledgerPaths(root);
  for (const dir of [ledger.dir, ledger.runsDir, ledger.pointersDir]) {
    const stat = fs.lstatSync(dir, { throwIfNoEntry: false });
    // Something else where a folder of the ledger goes: every command would say "not set up", and
    // init "already set up". Said, with nothing written; what is there is the person's to look at.
    if (stat && !stat.isDirectory()) throw notAFolder(dir);
    if (!stat) steps.push({ kind: 'mkdir', path: dir, summary: `created ${rel(dir)}/` });
  }
  if (!fs.existsSync(ledger.indexJsonl))
    steps.push({
      kind: 'write',
      path: ledger.indexJsonl,
      content: '',
      summary: `created ${rel(ledger.indexJsonl)}`,
    });
  if (!fs.existsSync(ledger.indexMd)) {
    steps.push({
      kind: 'write',
      path: ledger.indexMd,
      content: renderIndexMd(new Map()),
      summary: `created ${rel(ledger.indexMd)}`,
    });
  }
  return steps;
}

/** The ignore rules git does not apply yet (the ledger; a local config), added to the scope's ignore file. */
async function ignoreSteps(
  repo: Repo,
  scope: SettingsScope,
  rel: (p: string) => string,
): Promise<SetupStep[]> {
  const ignoreRules: IgnoreRule[] = [...LEDGER_IGNORES];
  if (scope === 'local') ignoreRules.push({ pattern: 'agentbox.yaml', probe: 'agentbox.yaml' });
  const unset = await unignored(repo.root, ignoreRules);
  let missing = unset;
  const steps: SetupStep[] = [];
  if (scope === 'shared') {
    // `uninstall` keeps a kept ledger ignored by moving agentbox's lines to this clone's exclude
    // file; a shared init found them ignored there and left the committed .gitignore without them,
    // so a teammate's clone no longer ignored the ledger. They go back to the shared file.
    const localFile = ignoreFilePath(repo, 'local');
    const localText = readTextIfExists(localFile);
    const parked = blockPatterns(localText).filter((p) => ignoreRules.some((r) => r.pattern === p));
    if (parked.length > 0) {
      missing = ignoreRules.filter((rule) => unset.includes(rule) || parked.includes(rule.pattern));
      steps.push({
        kind: 'write',
        path: localFile,
        content: removeIgnoreBlock(localText ?? '', parked).text,
        summary: `moved ${parked.join(', ')} from ${rel(localFile)} back to the shared ignore file`,
      });
    }
  }
  if (missing.length === 0) return steps;
  const file = ignoreFilePath(repo, scope === 'shared' ? 'shared' : 'local');
  // The repository's own file, read only from inside it: init wrote through `.gitignore -> ~/.aws/
  // credentials`, appending its lines to the person's file outside the repository.
  const content = addIgnoreBlock(
    readRepoText(file, repo.root),
    missing.map((r) => r.pattern),
  );
  const list = missing.map((r) => r.pattern).join(', ');
  return [...steps, { kind: 'write', path: file, content, summary: `ignored ${list} in ${rel(file)}` }];
}
