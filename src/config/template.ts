/** The commented project config that `agentbox init` writes. Every value shown is the default. */
export const PROJECT_CONFIG_TEMPLATE = `# agentbox project configuration.
# Precedence: built-in defaults < your user file (~/.config/agentbox/config.yaml)
#             < this file < environment variables < command-line flags.
# This file may tighten the user file's settings; a value that would loosen them (a higher limit,
# a command, a domain, sandbox off) is used only once "agentbox trust" is run for this repository.
# An empty key means "not set here". Unknown keys are errors. Check with: agentbox doctor

claude:
  # The Claude Code binary: a command name looked up on PATH, or a path (relative to the repo root).
  # AGENTBOX_CLAUDE_BIN overrides it. Empty (the default) means "claude" on PATH.
  bin:
  # The model every run uses (passed as --model). Empty means Claude Code's own default.
  model:

supervisor:
  # At every Stop (the agent is about to end its turn) the supervisor decides. claude: rules, then a
  # fresh \`claude -p\` answering [COMPLETE], [ABORT] or [CONTINUE] <text> (costs a model call per
  # Stop); rules: rules only (budget, loop guard, background work); off: no decisions.
  mode: # rules
  # Stops per run; the Stop that reaches it ends the run (ABORTED, budget). --max-iterations overrides.
  max_iterations: # 50
  # A cost budget in USD for each run, the supervisor's own calls included: a run that costs more is
  # ended (ABORTED, budget). Empty (the default): no budget. --max-cost overrides.
  max_cost:
  # Each supervisor call is given up after this long; then the rules decide.
  timeout: # 30s
  # The supervisor's Claude Code binary and model. Empty: the same as the runs'.
  bin:
  model:
  # The output contract (an output template's required sections) and runs.verify are checked when
  # the agent wants to end, in every mode. false: checked and logged, never enforced.
  enabled: # true
  # A run's timeout when runs.timeout is empty: standard 30m, long 2h, extended 6h.
  timeout_profile: # standard
  # Corrections the supervisor asks for before a violation fails the run
  # ("Supervisor violation: <type>").
  max_corrections: # 2
  # Every violation fails the run at once, no correction.
  fail_on_violation: # false
  # Check the final answer against the output template (missing_section, bad_format).
  require_format_validation: # true
  # With no output template (.agentbox/templates/output.md or yours): true, the raw answer is the
  # report; false, the built-in template applies (required sections, formatted report.md).
  allow_raw_output: # true

interactive:
  # Where \`agentbox start\` runs claude (relative to the repository root). Empty: the root.
  # --workdir overrides. A path that is not a folder is an error, never a silent fallback.
  cwd:
  # Crash policy: a crash restarts claude after restart_delay, resuming the session; the
  # flap_threshold-th crash within flap_window waits flapping_delay instead; halt_after crashes in a
  # row stop restarting (then: agentbox start --resume <run>). A clean exit asks you.
  restart_delay: # 2s
  flapping_delay: # 30s
  flap_window: # 60s
  flap_threshold: # 3
  halt_after: # 5

runs:
  # A run still going after this long is stopped and marked CRASHED (timeout). --timeout overrides.
  # Empty: supervisor.timeout_profile's (standard: 30m).
  timeout:
  # A run whose supervisor is alive but has not reported (a heartbeat every 15 s) for this long is
  # marked STALLED by the watchdog that runs before every agentbox command.
  stall_after: # 5m
  # Where fix runs get their git worktrees. Empty (the default): outside the repository, under
  # ~/.local/share/agentbox/worktrees/, so one deny rule keeps a fix run out of this whole working
  # tree. A path here is relative to the repository root; inside it (e.g. .agents/worktrees) the
  # guard then has to inspect every shell command of a fix run, which costs time on each one.
  worktree_dir:
  # The agent's environment is a whitelist (HOME, PATH, LANG, ANTHROPIC_*, CLAUDE_*, ...): no cloud
  # credentials or tokens leak in. Name extra variables your build needs here, e.g. [JAVA_HOME].
  env_pass: # []
  # What a fix run may do without asking besides editing its worktree. The default lets it run any
  # shell command (tests, builds) inside its worktree; narrow it, e.g. ["Bash(npm test:*)"].
  fix_allowed_tools: # [Bash]
  # The project's check, e.g. "npm test": run by agentbox in a fix run's worktree, in its sandbox,
  # when the agent wants to end; a failure is sent back to the agent to fix (verify_failed).
  verify:
  # The verification is stopped (and fails) after this long.
  verify_timeout: # 10m
  # The project's setup, e.g. "npm ci": run by agentbox in each new fix run's worktree, in its
  # sandbox, before the agent starts (a worktree has no ignored files such as node_modules). Its
  # output goes to the run's raw/setup.log; when it fails the run ends FAILED without starting.
  setup:
  # The setup is stopped (and fails) after this long.
  setup_timeout: # 10m
  # Hosts only the setup may reach, besides sandbox.allowed_domains, e.g. [registry.npmjs.org].
  setup_domains: # []
  # Runs interrupted by a crash or reboot, when agentbox ui starts: auto (agentbox recover at once),
  # ask (the page offers it) or off.
  restart_mode: # ask
  # Told when a run ends or an interactive session waits for you: a shell command that gets the
  # outcome as JSON on its standard input, e.g. notify-send "agentbox" "$(jq -r .status)".
  notify:
  # The notify command is stopped after this long.
  notify_timeout: # 10s
  # Ring the terminal that started the run (a bell; a desktop notification where the terminal shows one).
  notify_bell: # true
  # agentbox fix --attempts N: how many attempts run at once (1-16); the rest wait their turn.
  max_parallel: # 4

sandbox:
  # Every shell command of a scout, plan, review or fix run runs in Claude Code's sandbox
  # (bubblewrap + socat on Linux, Seatbelt on macOS): a fix run writes only in its worktree, a
  # read-only run only in its temp dir; none has network, and reads are denied by default: of your
  # home, only the toolchains and caches of docs/security.md's allowlist (never the ledger, your
  # credentials or Claude Code's config).
  # Where the sandbox cannot work, those runs refuse to start. Interactive sessions are yours.
  # "off" is the explicit opt-out, for a machine or container that is itself the sandbox.
  mode: # required
  # Hosts the shell commands may reach, e.g. [registry.npmjs.org] for npm install.
  allowed_domains: # []
  # More paths the shell commands may not read (~/.ssh, ~/.aws, ~/.config/gh … are always denied).
  deny_read: # []
  # More paths the shell commands may read, e.g. [~/.config/mytool] (needs trust in a repository's file).
  allow_read: # []
`;
