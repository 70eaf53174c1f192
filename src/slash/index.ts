/**
 * Run-scoped slash commands: `.claude/commands/run_<id>/<kind>_<id>.md`, offered by Claude Code
 * as `/run_<id>:<kind>_<id>`. Safe ones the model may invoke; human-only ones
 * (`disable-model-invocation: true`) only a person can.
 */
export {
  assertRunId,
  commandDirName,
  commandNames,
  commandPathProblem,
  type RenderedCommand,
  type RunCommandsSpec,
  renderRunCommands,
  skillRules,
  slashName,
} from './render.js';
export {
  type CommandKind,
  HUMAN_ONLY_KINDS,
  SAFE_KINDS,
  SAFE_KINDS_BY_TYPE,
  TEMPLATES_DIR,
  templatesDirFor,
} from './templates.js';
export {
  commandsRoot,
  listRunCommandDirs,
  removeRunCommands,
  runCommandsDir,
  writeRunCommands,
} from './write.js';
