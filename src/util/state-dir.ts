import path from 'node:path';

/**
 * agentbox's own state in the person's home, outside every repository (XDG Base Directory:
 * `$XDG_STATE_HOME/agentbox`, else `~/.local/state/agentbox`). A relative XDG_STATE_HOME is
 * ignored, as the specification says. The environment is passed in, never read from process.env.
 */
export function agentboxStateDir(env: Readonly<Record<string, string | undefined>>): string {
  const xdg = env.XDG_STATE_HOME;
  if (xdg && path.isAbsolute(xdg)) return path.join(xdg, 'agentbox');
  return path.join(env.HOME || '/', '.local', 'state', 'agentbox');
}
