import { spawn } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Env } from '../util/env.js';
import { writeAtomicSync } from '../util/fs.js';

/** `& < > "` as entities: an address in an HTML attribute. Pure. */
const attr = (text: string): string =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');

/** The page that sends the browser on to `loginUrl` at once (and a link, should it not). Pure. */
export function openerPage(loginUrl: string): string {
  const url = attr(loginUrl);
  return `<!doctype html><html lang="en"><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=${url}"><title>agentbox</title><p><a href="${url}">Open agentbox</a></p>\n`;
}

/** The command that opens a file in the person's browser: $BROWSER (as git and gh take it), else the system's. Pure. */
export function openerCommand(env: Env, platform: NodeJS.Platform = process.platform): string[] {
  const words = (env.BROWSER ?? '').trim().split(/\s+/).filter(Boolean);
  if (words.length > 0) return words;
  return [platform === 'darwin' ? 'open' : platform === 'win32' ? 'explorer' : 'xdg-open'];
}

/**
 * Opens the page in the person's browser without the token on a command line: every user of the
 * machine reads every process's arguments (`ps`, /proc/<pid>/cmdline), so `xdg-open <login URL>`
 * handed them the login. The opener gets a file instead — `open.html` in the UI's own state folder
 * (0700; the file 0600, like the state that keeps the token anyway) — which sends the browser on to
 * the login address. Where there is no opener, the printed address is enough. Returns the file.
 */
export function openPage(loginUrl: string, stateDir: string, env: Env): string {
  const file = path.join(stateDir, 'open.html');
  writeAtomicSync(file, openerPage(loginUrl), 0o600);
  const [command, ...args] = openerCommand(env);
  try {
    const child = spawn(command!, [...args, pathToFileURL(file).href], { stdio: 'ignore', detached: true });
    child.on('error', () => {});
    child.unref();
  } catch {
    // No opener: the address is printed.
  }
  return file;
}
