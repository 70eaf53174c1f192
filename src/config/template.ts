/** The commented project config that `agentbox init` writes. Every value shown is the default. */
export const PROJECT_CONFIG_TEMPLATE = `# agentbox project configuration.
# Precedence: built-in defaults < your user file (~/.config/agentbox/config.yaml)
#             < this file < environment variables < command-line flags.
# Unknown keys are errors, so a typo never silently does nothing. Check with: agentbox doctor

claude:
  # The Claude Code binary: a command name looked up on PATH, or a path (relative to the repo root).
  # AGENTBOX_CLAUDE_BIN overrides it. Empty (the default) means "claude" on PATH.
  bin:
  # The model every run uses (passed as --model). Empty means Claude Code's own default.
  model:
`;
