import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The page and its modules and styles: `web/` beside `dist/` in the package. */
export const WEB_DIR = fileURLToPath(new URL('../../web/', import.meta.url));

/** Set by `npm run build` (scripts/bundle.mjs), which also bundles the page's modules. */
declare const AGENTBOX_WEB_BUNDLE: boolean | undefined;

/**
 * The page's modules in one file, `dist/web/app.js`, when this code is the build: the browser asks
 * for it alone instead of ~30 modules. A run from src/ (tsx) serves web/ as it is, module by module.
 */
export const PAGE_BUNDLE: string | undefined =
  typeof AGENTBOX_WEB_BUNDLE === 'boolean' ? path.join(WEB_DIR, '..', 'dist', 'web', 'app.js') : undefined;

export interface Asset {
  readonly file: string;
  readonly type: string;
  /** The page's modules in one file: nothing else to preload. */
  readonly bundled?: boolean;
}

const TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/** A module or stylesheet of the page: a plain name, no folder, nothing hidden, nothing else. */
const SERVED = /^[a-z][a-z0-9-]*\.(?:js|css)$/;

/**
 * Static files by URL path, `/assets/<name>`: every script module and stylesheet at the top of
 * `web/` (a new view's module is served without a change here), and diff2html's from its package.
 * Nothing from a CDN. A request is looked up by its whole path in this map, never joined to a
 * folder, so no spelling of `..` reaches another file: what is not a key is not served.
 */
export function webAssets(webDir = WEB_DIR, bundle = PAGE_BUNDLE): ReadonlyMap<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const name of pageFiles(webDir)) {
    if (!SERVED.test(name)) continue;
    assets.set(`/assets/${name}`, { file: path.join(webDir, name), type: TYPES[path.extname(name)]! });
  }
  // The entry is the bundle when there is one; the modules stay served (a cached page may ask).
  if (bundle && assets.has('/assets/app.js') && fs.existsSync(bundle)) {
    assets.set('/assets/app.js', { file: bundle, type: TYPES['.js']!, bundled: true });
  }
  const diff2html = path.join(
    path.dirname(createRequire(import.meta.url).resolve('diff2html/package.json')),
    'bundles',
  );
  assets.set('/assets/diff2html.js', {
    file: path.join(diff2html, 'js', 'diff2html-ui-slim.min.js'),
    type: TYPES['.js']!,
  });
  assets.set('/assets/diff2html.css', {
    file: path.join(diff2html, 'css', 'diff2html.min.css'),
    type: TYPES['.css']!,
  });
  return assets;
}

/** The entry, diff2html (loaded when a diff is first drawn) and the login pages' scripts. */
const NOT_PRELOADED = new Set([
  '/assets/app.js',
  '/assets/diff2html.js',
  '/assets/login.js',
  '/assets/login-done.js',
]);

/**
 * `<link rel="modulepreload">` for every page module but the entry: the browser asks for them all
 * at once with the page, instead of one level of imports after another (each a round trip).
 */
export function modulePreloads(assets: ReadonlyMap<string, Asset>): string {
  if (assets.get('/assets/app.js')?.bundled) return '';
  return [...assets.keys()]
    .filter((url) => url.endsWith('.js') && !NOT_PRELOADED.has(url))
    .map((url) => `<link rel="modulepreload" href="${url}">`)
    .join('\n  ');
}

/** The files (not folders, not links) in `web/`; none when it is missing (a broken install: the page answers 500 and says so). */
function pageFiles(webDir: string): string[] {
  try {
    return fs
      .readdirSync(webDir, { withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => entry.name)
      .sort();
  } catch {
    return [];
  }
}
