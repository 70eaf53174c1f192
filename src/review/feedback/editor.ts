import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { AgentboxError } from '../../errors.js';
import type { Env } from '../../util/env.js';

/**
 * The person's editor on `file`, as git picks one: $VISUAL, else $EDITOR, else vi. The variable
 * may hold arguments (`code --wait`): split on spaces, never given to a shell. Resolves with the
 * file's text once the editor exits 0.
 */
export async function editFile(env: Env, file: string, initial: string): Promise<string> {
  fs.writeFileSync(file, initial);
  const words = (env.VISUAL || env.EDITOR || 'vi').trim().split(/\s+/);
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(words[0]!, [...words.slice(1), file], {
      stdio: 'inherit',
      env: env as NodeJS.ProcessEnv,
    });
    child.on('error', reject);
    child.on('exit', (exit) => resolve(exit));
  }).catch((error: Error) => {
    throw new AgentboxError('USAGE', `could not start your editor "${words[0]}": ${error.message}`, {
      hint: 'set VISUAL or EDITOR to an editor on your PATH, e.g. EDITOR=nano',
    });
  });
  if (code !== 0) {
    throw new AgentboxError(
      'USAGE',
      `your editor exited with ${code === null ? 'a signal' : `code ${code}`}: nothing was sent`,
      {
        hint: `your review is kept in ${file}: the same command opens it again`,
      },
    );
  }
  return fs.readFileSync(file, 'utf8');
}
