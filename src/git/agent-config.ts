/**
 * What a fix run's private git (private.ts) carries of the main repository's `.git/config`: an
 * allowlist, written as a file of its own. The main config stays unreadable to the run
 * (src/sandbox/fence.ts): it may hold a token — a remote URL with a password, actions/checkout's
 * `http.<url>.extraheader` AUTHORIZATION, a credential helper's arguments — and its commands
 * (fsmonitor, hooksPath, filters, diff drivers) are the repository's, not the agent's.
 * Carried: how the checkout behaves (line ends, case, symlinks), the object format the borrowed
 * objects are in, the person's identity for the agent's own commits, and each remote's URL without
 * its user and password. Pure: `listing` is `git config --list -z` of that file.
 */
const CARRIED: readonly RegExp[] = [
  /^core\.(filemode|symlinks|ignorecase|precomposeunicode|autocrlf|eol|safecrlf|quotepath|abbrev|commentchar)$/,
  /^user\.(name|email)$/,
  /^i18n\.(commitencoding|logoutputencoding)$/,
  /^remote\..+\.url$/,
];

/** A value or subsection in double quotes, as git reads it back. */
const quoted = (value: string) =>
  `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\t/g, '\\t')}"`;

/** `https://user:token@host/x` → `https://host/x`; an scp-like `git@host:x` names no secret. */
export function withoutCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, '$1');
}

export function agentGitConfig(listing: string): string {
  const sections = new Map<string, string[]>();
  let format = 'sha1';
  for (const entry of listing.split('\0')) {
    const nl = entry.indexOf('\n');
    if (nl <= 0) continue;
    const key = entry.slice(0, nl);
    let value = entry.slice(nl + 1);
    if (key === 'extensions.objectformat') format = value.toLowerCase();
    if (!CARRIED.some((re) => re.test(key))) continue;
    if (key.startsWith('remote.')) value = withoutCredentials(value);
    const first = key.indexOf('.');
    const last = key.lastIndexOf('.');
    const head =
      first === last
        ? `[${key.slice(0, first)}]`
        : `[${key.slice(0, first)} ${quoted(key.slice(first + 1, last))}]`;
    const lines = sections.get(head) ?? [];
    lines.push(`\t${key.slice(last + 1)} = ${quoted(value)}`);
    sections.set(head, lines);
  }
  // The objects are borrowed (alternates): the private git reads them in their format.
  const sha256 = format === 'sha256';
  const core = [
    `\trepositoryformatversion = ${sha256 ? 1 : 0}`,
    '\tbare = false',
    '\tlogallrefupdates = true',
    ...(sections.get('[core]') ?? []),
  ];
  sections.set('[core]', core);
  if (sha256) sections.set('[extensions]', ['\tobjectformat = sha256']);
  return [...sections].map(([head, lines]) => `${head}\n${lines.join('\n')}\n`).join('');
}
