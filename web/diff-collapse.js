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

/** `+++ b/<name>`, else `--- a/<name>` (a deleted file): the name diff2html shows. */
function headerName(file, line) {
  const m = /^(\+\+\+|---) (?:[ab]\/)?(.*)$/.exec(line);
  if (!m || m[2] === '/dev/null') return;
  if (m[1] === '+++' || !file.name) file.name = m[2].replace(/\t.*$/, '');
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
