import { AgentboxError } from '../errors.js';
import { readSettings, SETTINGS_FILES, settingsPath } from './file.js';
import { validateSettings } from './validate.js';

/**
 * A run refuses to start while a project settings file of Claude Code does not load: Claude Code
 * drops such a file whole and silently, and the project's guard (hooks, deny rules) with it.
 * Names the file, the line (for JSON errors) and the entry, and the fix.
 */
export function assertProjectSettings(repoRoot: string): void {
  for (const scope of ['shared', 'local'] as const) {
    const file = settingsPath(repoRoot, scope);
    // readSettings throws for invalid JSON, with the line and column.
    const settings = readSettings(file);
    if (settings.text === undefined) continue;
    const issues = validateSettings(settings.value);
    if (issues.length > 0) {
      const first = issues[0]!;
      throw new AgentboxError(
        'SETTINGS_INVALID',
        `${SETTINGS_FILES[scope]} would be ignored by Claude Code (and the project's guard with it): ${first.path} ${first.message}${issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''}`,
        { hint: `fix ${file} by hand, then start the run again; "agentbox doctor" lists every problem` },
      );
    }
  }
}
