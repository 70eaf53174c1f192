/**
 * The kernel boundary of a run: Claude Code's own sandbox (bubblewrap + socat on Linux, Seatbelt on
 * macOS) around every Bash command and whatever it starts. Measured with Claude Code 2.1.330 (see
 * test/e2e/seal.test.ts): the file system is read-only but for `writable`; `denyRead` paths read as
 * missing unless `allowRead` opens them again (test/e2e/read-fence-facts.test.ts); there is no network (loopback included) beyond `allowedDomains` through its proxy.
 * NOTE: Claude Code binds the git common dir of a worktree writable by itself (refs, objects,
 * HEAD, packed-refs: a run could move the person's branch or delete objects). `denyWrite` on the
 * main repository's whole git dir wins over that, and over any allow beneath it.
 * NOTE: a denied path that does not exist is turned into an unreadable mount point (and bwrap may
 * leave it behind on the host): only existing paths may be listed. `sandboxSettings` is pure; the
 * caller filters with `existingPaths`.
 */
export interface SandboxInput {
  /** Where Bash may write: the worktree, the run's private git dir and temp dir. */
  readonly writable: readonly string[];
  /** What Bash may not read: the person's home and every run's work (regions), the ledger, secrets. */
  readonly denyRead: readonly string[];
  /** Paths opened again inside `denyRead` (src/sandbox/read-allowlist.ts): allowRead beats denyRead. */
  readonly allowRead: readonly string[];
  /** Never writable, whatever Claude Code allows by itself: the main repository's git dir. */
  readonly denyWrite: readonly string[];
  /** A fix run's Bash runs without asking, inside the sandbox; read-only runs keep asking. */
  readonly autoAllowBash: boolean;
  /** Hosts Bash may reach through the sandbox's proxy; none by default. */
  readonly allowedDomains: readonly string[];
  /**
   * agentbox's own proxy ports (src/endpoint/refuse-network.ts), for a run that reaches nothing but
   * its endpoint: Claude Code then starts no proxies of its own. Absent: Claude Code's proxies.
   */
  readonly proxyPorts?: { readonly httpPort: number; readonly socksPort: number };
}

export function sandboxSettings(input: SandboxInput): Record<string, unknown> {
  return {
    sandbox: {
      enabled: true,
      // Fail closed: a sandbox that cannot start is an error, never an unsandboxed command.
      failIfUnavailable: true,
      autoAllowBashIfSandboxed: input.autoAllowBash,
      // No escape hatch for the model: a command the sandbox refuses is not retried outside it.
      allowUnsandboxedCommands: false,
      filesystem: {
        allowWrite: [...input.writable],
        denyWrite: [...input.denyWrite],
        denyRead: [...input.denyRead],
        allowRead: [...input.allowRead],
      },
      network: {
        allowedDomains: [...input.allowedDomains],
        ...(input.proxyPorts
          ? { httpProxyPort: input.proxyPorts.httpPort, socksProxyPort: input.proxyPorts.socksPort }
          : {}),
      },
    },
  };
}

/**
 * Folders Anthropic's sandbox runtime makes writable whatever the configuration (its own
 * convenience, for npm's and Claude Code's logs), relative to HOME: denied again where they exist.
 */
export const RUNTIME_WRITABLE: readonly string[] = ['.npm/_logs', '.claude/debug'];
