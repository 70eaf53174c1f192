import type { Env } from '../util/env.js';

/**
 * The agent's environment is built from a whitelist, never from "everything minus a blacklist":
 * whatever the developer's shell holds (cloud keys, tokens, an ssh-agent socket) stays out unless
 * it is named here or in the user's `pass` list. Each name says why the agent needs it.
 * NOTE: this keeps secrets out of the environment, it is not a sandbox: files the user can read
 * (~/.aws, ~/.config/gh) are still readable unless deny rules and hooks say otherwise.
 */
export const ENV_WHITELIST: readonly string[] = [
  // Where claude keeps its config and git finds ~/.gitconfig.
  'HOME',
  // How claude finds git, node and the project's tools.
  'PATH',
  // Who runs: git's identity fallback, `whoami`, paths in messages.
  'USER',
  'LOGNAME',
  // The shell the Bash tool runs.
  'SHELL',
  // Temp files of claude and of the tools it runs.
  'TMPDIR',
  // Timestamps in logs and commits match the user's.
  'TZ',
  // Encoding of file names and output (LC_* passes as a prefix).
  'LANG',
  'LANGUAGE',
  // Rendering in interactive runs: terminal type, colours, the terminal's own keybindings.
  'TERM',
  'COLORTERM',
  'NO_COLOR',
  'FORCE_COLOR',
  'TERM_PROGRAM',
  'TERM_PROGRAM_VERSION',
  // Claude detects tmux for its notifications. NOTE: not a boundary either way: the default
  // tmux socket in /tmp can be found without it.
  'TMUX',
  'TMUX_PANE',
  // Interactive claude opens the prompt in $EDITOR (ctrl-g); git uses them too.
  'EDITOR',
  'VISUAL',
  // Where tools keep config and caches, so they behave as they do for the user. XDG_RUNTIME_DIR is
  // left out on purpose: it holds the user's agent sockets (ssh, gpg, D-Bus).
  'XDG_CONFIG_HOME',
  'XDG_CACHE_HOME',
  'XDG_DATA_HOME',
  'XDG_STATE_HOME',
  // Certificates of a TLS-inspecting proxy: paths, not secrets; without them the API is unreachable.
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  // Proxies: see PROXY_NAMES; passed only when the URL carries no credentials.
  ...proxyNames(),
  // Toolchain locations (paths, not secrets), so the agent builds and tests as the user would.
  'JAVA_HOME',
  'GOPATH',
  'GOROOT',
  'CARGO_HOME',
  'RUSTUP_HOME',
  'NVM_DIR',
  'VOLTA_HOME',
  'PNPM_HOME',
  'PYENV_ROOT',
  'VIRTUAL_ENV',
  // Claude Code's own knobs that do not start with CLAUDE_ (documented settings env vars).
  'DISABLE_AUTOUPDATER',
  'DISABLE_TELEMETRY',
  'DISABLE_ERROR_REPORTING',
  'DISABLE_BUG_COMMAND',
  'DISABLE_COST_WARNINGS',
  'DISABLE_NON_ESSENTIAL_MODEL_CALLS',
  'MAX_THINKING_TOKENS',
  'MAX_MCP_OUTPUT_TOKENS',
  'MCP_TIMEOUT',
  'MCP_TOOL_TIMEOUT',
  'BASH_DEFAULT_TIMEOUT_MS',
  'BASH_MAX_TIMEOUT_MS',
  'BASH_MAX_OUTPUT_LENGTH',
  'SLASH_COMMAND_TOOL_CHAR_BUDGET',
  'USE_BUILTIN_RIPGREP',
];

/**
 * Whole families, passed whatever the rest of the name says. ANTHROPIC_ and CLAUDE_ are claude's
 * own (API key, base URL, config dir, OAuth token: it cannot work without them); AGENTBOX_ is
 * ours (run id, lineage; never the hook endpoint's token, which is in no environment); LC_ is the
 * locale.
 * NOTE: the agent can read these through its Bash tool, ANTHROPIC_API_KEY included: claude
 * needs the key, so a run can always see it.
 */
export const ENV_PREFIXES: readonly string[] = ['ANTHROPIC_', 'CLAUDE_', 'AGENTBOX_', 'LC_'];

function proxyNames(): string[] {
  const upper = ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'NO_PROXY'];
  return [...upper, ...upper.map((n) => n.toLowerCase())];
}
const PROXY_NAMES = new Set(proxyNames());

/**
 * Names that look like credentials, and whole cloud families (AWS_, GOOGLE_, AZURE_…). A `pass`
 * wildcard (`MY_APP_*`, even `AWS_*`) never lets one through: only an exact name in `pass` does,
 * so every secret a run sees was named one by one. That includes `*_SECRET` and `*_PASSWORD`:
 * a test database password named in `pass` is the user's decision, and refusing it would only
 * push people to rename it. (The whitelist is curated by hand and holds none of these.)
 */
const SECRET_NAME_RES: readonly RegExp[] = [
  /^AWS_/,
  /^GOOGLE_/,
  /^GCLOUD_/,
  /^GCP_/,
  /^AZURE_/,
  /^SSH_AUTH_SOCK$/,
  /^GPG_AGENT_INFO$/,
  /^DATABASE_URL$/,
  /^KUBECONFIG$/,
  /TOKEN/,
  /SECRET/,
  /PASSW(OR)?D/,
  /_PWD$/,
  /_KEY$/,
  /_KEY_/,
  /API_?KEY/,
  /CREDENTIAL/,
  /_PAT$/,
  /_DSN$/,
  /COOKIE/,
  // Whole words only: GIT_AUTHOR_NAME is not a secret, DBUS_SESSION_BUS_ADDRESS is a door.
  /(^|_)AUTH(_|$)/,
  /(^|_)SESSION(_|$)/,
];

export function isSecretName(name: string): boolean {
  const upper = name.toUpperCase();
  return SECRET_NAME_RES.some((re) => re.test(upper));
}

/** `http://user:pass@proxy:3128` and `user@proxy` carry credentials; `http://proxy:3128` does not. */
export function proxyHasCredentials(value: string): boolean {
  const withoutScheme = value.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
  const authority = withoutScheme.split(/[/?#]/, 1)[0] ?? '';
  return authority.includes('@');
}

function hasPrefix(name: string, prefixes: readonly string[]): boolean {
  return prefixes.some((p) => name.startsWith(p));
}

/**
 * The environment claude runs with: the whitelist, the prefixes, the user's `pass` names (exact
 * names, or `PREFIX*` wildcards that never match secret-looking names), then `extra` on top
 * (agentbox's own values win). Bedrock or Vertex users name their AWS_* / GOOGLE_* variables
 * in `pass` one by one. `PWD` is the launch directory; unset values are dropped, empty
 * ones kept (`NO_COLOR=` means something).
 *
 * Proxies (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY, any case) are needed to reach the API
 * from behind a corporate proxy, so they pass; but one whose URL embeds `user:password@` passes
 * only when named exactly in `pass`, like any other secret.
 */
export function buildAgentEnv(
  parent: Env,
  opts: { extra?: Record<string, string>; pass?: string[]; cwd: string },
): Record<string, string> {
  const pass = opts.pass ?? [];
  const exact = new Set(pass.filter((p) => !p.endsWith('*')));
  const wildcards = pass.filter((p) => p.endsWith('*') && p.length > 1).map((p) => p.slice(0, -1));
  const whitelist = new Set(ENV_WHITELIST);

  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(parent)) {
    if (value === undefined) continue;
    if (wanted(name, value)) out[name] = value;
  }
  out.PWD = opts.cwd;
  // The hook endpoint's secret and address never reach an agent, whatever the parent had (an
  // agentbox started from inside another run's hooks, an older agentbox's environment).
  delete out.AGENTBOX_TOKEN;
  delete out.AGENTBOX_URL;
  return { ...out, ...opts.extra };

  function wanted(name: string, value: string): boolean {
    if (exact.has(name)) return true;
    if (PROXY_NAMES.has(name)) return !proxyHasCredentials(value);
    if (whitelist.has(name) || hasPrefix(name, ENV_PREFIXES)) return true;
    return hasPrefix(name, wildcards) && !isSecretName(name);
  }
}
