import path from 'node:path';
import { editConfigText, type SettingChange } from '../config/edit.js';
import { PROJECT_CONFIG_FILE, projectConfigPath, userConfigPath, yamlValue } from '../config/load.js';
import { RULES, type Rule } from '../config/rules.js';
import { fileSchema } from '../config/schema.js';
import { loadTrustedConfig, trustStatus } from '../trust/index.js';
import type { Env } from '../util/env.js';
import { mkdirp, readRepoText, readTextIfExists, writePersonFile } from '../util/fs.js';
import { HttpError } from './http.js';

/**
 * `GET /api/settings`: the effective configuration, each file's own text, and what the repository
 * carries that is not used until the person trusts it at a terminal (`agentbox trust`; the page
 * cannot: a stolen session must not be able to run a command).
 */
export function readSettings(root: string, env: Env) {
  const { config, sources, trust } = loadTrustedConfig({ repoRoot: root, env });
  return {
    effective: config,
    awaiting_trust: trust && !trust.trusted ? trust.entries : [],
    files: sources.map((s) => ({
      scope: s.kind === 'user' ? 'global' : 'project',
      path: s.path,
      text: (s.kind === 'project' ? readRepoText(s.path, root) : readTextIfExists(s.path)) ?? null,
    })),
  };
}

/**
 * Settings that run a command as the person or widen what a run may do: the web UI never changes
 * them. Its token is a bearer secret; a stolen one (a browser extension, a shared screen, a log)
 * must not become code execution (`runs.notify`, then start a run) nor open the person's files to
 * a run (`sandbox.allow_read`). They are edited in the file.
 *
 * NOTE: an allowlist of rule kinds (config/rules.ts): the page changes a key only when its rule
 * says it bounds a run (a limit, a choice among strict and loose) or changes nothing a run may
 * reach (free); every other kind — a command, a place, a list of allowances or denials, the
 * person's own widening (`yours`), and any kind added later — is guarded.
 */
const PAGE_KINDS: ReadonlySet<Rule['kind']> = new Set(['free', 'limit', 'order']);

export const GUARDED_SETTINGS: readonly string[] = [
  ...Object.entries(RULES).flatMap(([section, rules]) =>
    Object.entries(rules as Record<string, Rule>)
      .filter(([, rule]) => !PAGE_KINDS.has(rule.kind))
      .map(([key]) => `${section}.${key}`),
  ),
  // …and the sandbox itself.
  'sandbox.mode',
];

/**
 * `PUT /api/settings {scope, <section>: {<key>: value}}`: sets those keys in agentbox.yaml
 * (project) or the user config (global), each value replaced in place so every comment and line
 * around it stays (src/config/edit.ts); a null value empties a key (back to the default). The result is validated by the CLI's schema
 * first: an unknown key or a bad value is a 400 naming it, and nothing is written. A key whose
 * value the file already holds is left alone (`changed` lists only what was written): the page
 * sends only what the person changed, and a repeat of a save writes nothing.
 */
export async function writeSettings(root: string, env: Env, body: Record<string, unknown>) {
  const scope = body.scope;
  if (scope !== 'project' && scope !== 'global') {
    throw new HttpError(400, `"scope" must be "project" or "global", not ${JSON.stringify(scope)}`);
  }
  const file = scope === 'project' ? projectConfigPath(root) : userConfigPath(env);
  if (!file) throw new HttpError(400, 'no user config path: set HOME, XDG_CONFIG_HOME or AGENTBOX_CONFIG');
  const text = (scope === 'project' ? readRepoText(file, root) : readTextIfExists(file)) ?? '';
  const current = yamlValue(text);
  if ('problem' in current) throw new HttpError(409, `${file} is not valid YAML: fix it by hand first`);
  const changes = requestedChanges(body);
  const guarded = changes.map((c) => `${c.section}.${c.key}`).filter((k) => GUARDED_SETTINGS.includes(k));
  if (guarded.length > 0) {
    throw new HttpError(
      403,
      `${guarded.join(', ')} ${guarded.length > 1 ? 'run commands or widen' : 'runs a command or widens'} what a run may do: the web UI does not change ${guarded.length > 1 ? 'them' : 'it'}; edit ${file} yourself`,
      { key: guarded[0] },
    );
  }
  checkSchema(editConfigText(text, changes));
  // A value the file holds already is not written again: nothing pinned, no line touched.
  const held = (current.value ?? {}) as Record<string, Record<string, unknown> | undefined>;
  const real = changes.filter(
    (c) => JSON.stringify(held[c.section]?.[c.key] ?? null) !== JSON.stringify(c.value),
  );
  if (real.length > 0) {
    const edited = editConfigText(text, real);
    // What is written must read back as exactly what was asked, every key, or nothing is written.
    const back = yamlValue(edited);
    const readBack = (c: SettingChange) =>
      'value' in back
        ? (back.value as Record<string, Record<string, unknown> | null> | null)?.[c.section]?.[c.key]
        : undefined;
    const wrong = real.find(
      (c) => 'problem' in back || JSON.stringify(readBack(c) ?? null) !== JSON.stringify(c.value ?? null),
    );
    if (wrong)
      throw new HttpError(
        400,
        `${wrong.section}.${wrong.key}: this value cannot be written to ${file} as it is: nothing was written`,
        {
          key: `${wrong.section}.${wrong.key}`,
        },
      );
    mkdirp(path.dirname(file));
    await writePersonFile(file, edited);
  }
  const changed = real.map((c) => `${c.section}.${c.key}`);
  return { scope, path: file, changed, awaiting_trust: awaitingTrust(root, env, scope, changed) };
}

/**
 * The keys just written to agentbox.yaml that do not apply yet: a project value that loosens the
 * person's own setting waits for `agentbox trust` at a terminal, like any repository's (the page
 * says so rather than "saved" alone).
 */
function awaitingTrust(root: string, env: Env, scope: string, changed: readonly string[]): string[] {
  if (scope !== 'project' || changed.length === 0) return [];
  const trust = trustStatus(root, env);
  if (trust.trusted) return [];
  return changed.filter((key) => trust.entries.some((e) => e.file === PROJECT_CONFIG_FILE && e.key === key));
}

/** `{ <section>: { <key>: value } }` of a PUT, as changes; 400 for a section that is not an object. */
function requestedChanges(body: Record<string, unknown>): SettingChange[] {
  const changes: SettingChange[] = [];
  for (const [section, values] of Object.entries(body)) {
    if (section === 'scope') continue;
    if (typeof values !== 'object' || values === null || Array.isArray(values)) {
      throw new HttpError(400, `"${section}" must be an object of settings, not ${JSON.stringify(values)}`);
    }
    for (const [key, value] of Object.entries(values)) changes.push({ section, key, value });
  }
  return changes;
}

/** The CLI's own validation of a config text: 400 naming the first bad key. */
function checkSchema(edited: string): void {
  const read = yamlValue(edited);
  if ('problem' in read)
    throw new HttpError(
      400,
      `these values would not make valid YAML: ${read.problem.message}: nothing was written`,
    );
  const checked = fileSchema.safeParse(read.value ?? {});
  if (checked.success) return;
  const issue = checked.error.issues[0]!;
  const keys =
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((k) => [...issue.path, k].join('.'))
      : [issue.path.join('.')];
  throw new HttpError(400, `${keys.join(', ')}: ${issue.message}`, { key: keys[0] });
}
