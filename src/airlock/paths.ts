import fs from 'node:fs';
import path from 'node:path';

/**
 * The real path of `p`, also when it does not exist yet: the deepest existing ancestor is
 * resolved through symlinks and the rest appended. A guard that compared unresolved paths could
 * be walked around with a symlink or `..`.
 */
export function canonical(p: string): string {
  const abs = path.resolve(p);
  let existing = abs;
  const rest: string[] = [];
  while (!fs.existsSync(existing)) {
    const parent = path.dirname(existing);
    if (parent === existing) break;
    rest.unshift(path.basename(existing));
    existing = parent;
  }
  let real = existing;
  try {
    real = fs.realpathSync(existing);
  } catch {
    // Unreadable: compare the path as given.
  }
  return path.join(real, ...rest);
}

/** Whether `child` is `parent` or inside it (both canonical). */
export function isInside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}
