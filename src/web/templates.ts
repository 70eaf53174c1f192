import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AgentboxError } from '../errors.js';
import { contractSchema } from '../templates/contract.js';
import { readTemplate } from '../templates/load.js';
import { BUILTIN_DIR, locateTemplates, TEMPLATE_TYPES, templateDirs } from '../templates/locate.js';
import type { Env } from '../util/env.js';
import { mkdirp, readRepoText, readTextIfExists, refuseWriteOut, writePersonFile } from '../util/fs.js';
import { HttpError, stringField } from './http.js';

/** A template file's name: `<kind>.md` for every type, `<type>.<kind>.md` for one. */
const NAME = new RegExp(`^((${TEMPLATE_TYPES.join('|')})\\.)?(input|output)\\.md$`);

/** `GET /api/templates`: both folders, the files in each, and what each run type gets today. */
export function readTemplates(root: string, env: Env) {
  const dirs = templateDirs(env, root);
  // The project's files are the repository's: a link out of it (to /etc/passwd, ~/.ssh/…) is not
  // read, as the command line refuses it; the file is listed with why (the person's own are theirs).
  const read = (file: string, own: boolean): { text: string; error?: string } => {
    if (own) return { text: readTextIfExists(file) ?? '' };
    try {
      return { text: readRepoText(file, root) ?? '' };
    } catch (error) {
      return { text: '', error: (error as Error).message };
    }
  };
  const files = (dir: string | null, own = true) =>
    dir && fs.existsSync(dir)
      ? fs
          .readdirSync(dir)
          .filter((name) => NAME.test(name))
          .sort()
          .map((name) => ({ name, ...read(path.join(dir, name), own) }))
      : [];
  const label = (file: string | null) =>
    file === null ? null : file.startsWith(BUILTIN_DIR) ? `built-in ${path.basename(file)}` : file;
  return {
    dirs,
    files: { global: files(dirs.global), project: files(dirs.project, false) },
    builtin: files(BUILTIN_DIR),
    types: Object.fromEntries(
      TEMPLATE_TYPES.map((type) => {
        const found = locateTemplates(dirs, type, { builtinOutput: false });
        return [
          type,
          {
            globalInput: label(found.globalInput),
            projectInput: label(found.projectInput),
            output: label(found.output),
          },
        ];
      }),
    ),
  };
}

/**
 * `PUT /api/templates {level, name, text}`: writes one template file of the person's (global) or
 * the project's, after the checks a run makes (front matter, variables, an output template's
 * contract): a bad one is a 400 naming the problem, and nothing is written. `text: null` removes
 * the file (back to the level below).
 */
export async function writeTemplate(root: string, env: Env, body: Record<string, unknown>) {
  const level = body.level;
  if (level !== 'global' && level !== 'project') {
    throw new HttpError(400, `"level" must be "global" or "project", not ${JSON.stringify(level)}`);
  }
  const name = stringField(body, 'name', true);
  if (!NAME.test(name)) {
    throw new HttpError(
      400,
      `"name" must be input.md, output.md or <type>.input.md / <type>.output.md, not "${name}"`,
    );
  }
  const dir = templateDirs(env, root)[level];
  if (!dir)
    throw new HttpError(400, 'no global templates folder: set HOME, XDG_CONFIG_HOME or AGENTBOX_CONFIG');
  const file = path.join(dir, name);
  // The repository's folder may be a stranger's link: nothing is written or removed out of it.
  if (level === 'project') {
    try {
      refuseWriteOut(file, root);
    } catch (error) {
      throw error instanceof AgentboxError ? new HttpError(409, error.message) : error;
    }
  }
  if (body.text === null) {
    fs.rmSync(file, { force: true });
    return { level, path: file, removed: true };
  }
  const text = stringField(body, 'text', true);
  checkTemplate(name, text);
  mkdirp(dir);
  await writePersonFile(file, text);
  return { level, path: file, removed: false };
}

/** The checks a run makes when it reads the template, on the text before it is written. */
function checkTemplate(name: string, text: string): void {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'agentbox-template-'));
  try {
    const file = path.join(scratch, name);
    // A fresh scratch folder: nothing is replaced and nobody reads it meanwhile.
    fs.writeFileSync(file, text);
    const loaded = readTemplate(file);
    if (name.endsWith('output.md')) {
      const contract = contractSchema.safeParse(loaded.data);
      if (!contract.success) {
        const issue = contract.error.issues[0]!;
        throw new HttpError(400, `${name}: front matter ${issue.path.join('.') || ''}: ${issue.message}`);
      }
    }
  } catch (error) {
    if (error instanceof AgentboxError)
      throw new HttpError(
        400,
        error.message.replace(scratch + path.sep, ''),
        error.hint ? { hint: error.hint } : {},
      );
    throw error;
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}
