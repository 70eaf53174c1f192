/**
 * Whether a command's output shows the sandbox's proxy refusing a host, and which hosts it names.
 * The proxy answers a host outside its allowlist with 403 "host is not on the allow list" (and
 * `X-Proxy-Error: blocked-by-allowlist`); npm prints it as `E403 … 403 host is not on the allow list
 * - GET https://registry.npmjs.org/dequal`, pip as `Tunnel connection failed: 403 host is not on
 * the allow list`, curl as `CONNECT tunnel failed, response 403` (measured with srt 0.0.83).
 * Null: no refusal seen. Pure.
 */
export function refusedHosts(output: string): { readonly hosts: readonly string[] } | null {
  const lines = output
    .split('\n')
    .filter((l) =>
      /host is not on the allow list|blocked-by-allowlist|CONNECT tunnel failed, response 403/.test(l),
    );
  if (lines.length === 0) return null;
  const hosts = new Set<string>();
  for (const line of lines)
    for (const m of line.matchAll(/\bhttps?:\/\/([a-z0-9.-]+)/gi)) hosts.add(m[1]!.toLowerCase());
  return { hosts: [...hosts] };
}
