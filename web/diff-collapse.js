// Large files collapsed in a diff, as GitHub does (issue 40): a file of more than COLLAPSE_LINES
// changed lines, or one a tool generates (a lock file, minified code, a source map), is not drawn
// with the rest; its header says how big it is and "Load diff" draws it. diff2html's time grows
// with the lines it draws and highlights: one 20,000-line lock file would hold the whole page.

/** More changed lines (added + removed) than this: collapsed. */
export const COLLAPSE_LINES = 400;

/** Files people do not review line by line: lock files, minified code, source maps. */
const GENERATED =
  /(^|\/)(package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|bun\.lock|Cargo\.lock|Gemfile\.lock|composer\.lock|poetry\.lock|Pipfile\.lock|uv\.lock|go\.sum|flake\.lock)$|\.min\.(js|css)$|\.map$/;

/**
 * The patch cut at each `diff --git`: per file its text, its name (the new one; the old one of a
 * deletion), the lines it adds and removes, and why it is collapsed (null: drawn at once).
 */
export function splitPatch(patch) {
  const files = [];
  let file = null;
  for (const line of patch.split('\n')) {
    if (line.startsWith('diff --git ')) {
      file = { lines: [line], name: '', added: 0, removed: 0, inHunk: false };
      files.push(file);
      continue;
    }
    if (!file) continue;
    file.lines.push(line);
    if (line.startsWith('@@')) file.inHunk = true;
    else if (!file.inHunk) headerName(file, line);
    else if (line.startsWith('+')) file.added++;
    else if (line.startsWith('-')) file.removed++;
  }
  return files.map(({ lines, name, added, removed }) => {
    const text = `${lines.join('\n').replace(/\n+$/, '')}\n`;
    return { text, name, added, removed, why: whyCollapsed(name, added + removed) };
  });
}

/**
 * `+++ b/<name>`, else `--- a/<name>` (a deleted file), else `rename to <name>` (a rename with no
 * change inside): the file's path, unquoted when git quoted it (`"b/tab\there"`).
 */
function headerName(file, line) {
  const renamed = /^rename to (.*)$/.exec(line);
  if (renamed) {
    file.name ||= unquote(renamed[1]);
    return;
  }
  const m = /^(\+\+\+|---) (.*)$/.exec(line);
  if (!m || m[2] === '/dev/null') return;
  const name = unquote(m[2].startsWith('"') ? m[2] : m[2].replace(/\t.*$/, '')).replace(/^[ab]\//, '');
  if (m[1] === '+++' || !file.name) file.name = name;
}

const ESCAPES = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };

/** A path as git quotes one (C-style, octal bytes of UTF-8), as it is; an unquoted one as it is. */
export function unquote(text) {
  if (!text.startsWith('"') || !text.endsWith('"') || text.length < 2) return text;
  const bytes = [];
  const body = text.slice(1, -1);
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c !== '\\') {
      bytes.push(...new TextEncoder().encode(c));
      continue;
    }
    const next = body[i + 1] ?? '';
    const octal = /^[0-7]{3}/.exec(body.slice(i + 1));
    if (octal) {
      bytes.push(Number.parseInt(octal[0], 8));
      i += 3;
    } else {
      bytes.push(ESCAPES[next] ?? next.charCodeAt(0));
      i += 1;
    }
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

function whyCollapsed(name, changed) {
  if (GENERATED.test(name)) return 'generated';
  return changed > COLLAPSE_LINES ? 'large' : null;
}

/** What diff2html draws at once: a collapsed file as its header alone (its name, no lines). */
export function drawnAtOnce(files, expanded) {
  return files.map((f) => (f.why && !expanded.has(f.name) ? header(f.text) : f.text)).join('');
}

const header = (text) => {
  const at = text.search(/^@@/m);
  return at === -1 ? text : text.slice(0, at);
};
