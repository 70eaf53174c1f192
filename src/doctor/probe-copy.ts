import fs from 'node:fs';
import path from 'node:path';
import { isObject, type Json, type JsonObject, readSettings, SETTINGS_FILES } from '../settings/file.js';

/** Settings keys whose string value is a command Claude Code runs (helpers). */
const COMMAND_KEYS = [
  'apiKeyHelper',
  'awsAuthRefresh',
  'awsCredentialExport',
  'gcpAuthRefresh',
  'otelHeadersHelper',
];

/**
 * A settings file as the probe may load it: the same shape (so Claude Code accepts or drops it for
 * the same reasons), but nothing in it can run: hooks are switched off, helper commands become
 * `true`, the environment's values are emptied. Pure.
 */
export function inertSettings(value: JsonObject): JsonObject {
  const out: JsonObject = { ...value, disableAllHooks: true };
  for (const key of COMMAND_KEYS) if (typeof out[key] === 'string') out[key] = 'true';
  for (const key of ['statusLine', 'fileSuggestion'])
    if (isObject(out[key] as Json) && typeof (out[key] as JsonObject).command === 'string')
      out[key] = { ...(out[key] as JsonObject), command: 'true' };
  if (isObject(out.env as Json))
    out.env = Object.fromEntries(Object.keys(out.env as JsonObject).map((k) => [k, ''])) as JsonObject;
  delete out.enableAllProjectMcpServers;
  delete out.enabledMcpjsonServers;
  return out;
}

/**
 * A folder holding inert copies of the repository's settings files (and nothing else: no
 * `.mcp.json`), for `doctor`'s probe: it checks that Claude Code accepts them without running
 * anything a repository wrote, trusted or not.
 */
export function probeCopy(repoRoot: string, dir: string): string {
  const project = path.join(dir, 'project');
  fs.mkdirSync(path.join(project, '.claude'), { recursive: true });
  for (const file of Object.values(SETTINGS_FILES)) {
    const settings = readSettings(path.join(repoRoot, file));
    if (settings.text === undefined) continue;
    fs.writeFileSync(path.join(project, file), `${JSON.stringify(inertSettings(settings.value), null, 2)}\n`);
  }
  return project;
}
