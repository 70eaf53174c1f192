import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './bin.js';
import { CLAUDE_BIN } from './claude.js';

const run = promisify(execFile);

/**
 * A real npm registry on a random loopback port: verdaccio, in this process (nothing is left
 * running after close), with its own storage and no uplink: whatever is not published to it does
 * not exist. npm reaches it through `env` (npm_config_registry and a userconfig with its token).
 */
export interface Registry {
  readonly url: string;
  /** npm's environment for this registry: the registry, a token, a cache and logs of its own. */
  readonly env: Record<string, string>;
  /** `npm publish <tarball>` (the real client). */
  publish(tarball: string): Promise<void>;
  /** A package directory as it is (an installed dependency), through the registry's publish API. */
  publishDir(dir: string): Promise<void>;
  close(): Promise<void>;
}

export async function startRegistry(dir: string): Promise<Registry> {
  // The person's npm setting this test keeps: the cache that holds the dependencies' tarballs. Node's
  // headers are nowhere (nodedir): nothing agentbox depends on may need a compile (issue 38).
  const config = async (key: string) =>
    (await run('npm', ['config', 'get', key], { cwd: dir })).stdout.trim();
  fs.mkdirSync(dir, { recursive: true });
  const cache = await config('cache');
  seedDependencies(path.join(dir, 'storage'), cache);
  const { runServer } = (await import('verdaccio')) as unknown as {
    runServer(config: unknown): Promise<Server>;
  };
  const access = { access: '$all', publish: '$authenticated', unpublish: '$authenticated' };
  const server = await runServer({
    self_path: path.join(dir, 'config.yaml'),
    storage: path.join(dir, 'storage'),
    auth: { htpasswd: { file: path.join(dir, 'htpasswd'), max_users: 10 } },
    uplinks: {},
    packages: { '@*/*': access, '**': access },
    web: { enable: false },
    max_body_size: '100mb',
    log: { type: 'stdout', format: 'pretty', level: 'fatal' },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const user = await fetch(`${url}-/user/org.couchdb.user:test`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'test', password: 'test-password' }),
  });
  const { token } = (await user.json()) as { token: string };
  const npmrc = path.join(dir, 'npmrc');
  const node = `nodedir=${path.join(dir, 'no-node-headers')}\n`;
  fs.writeFileSync(npmrc, `registry=${url}\n${url.replace(/^http:/, '')}:_authToken=${token}\n${node}`);
  const env = {
    npm_config_registry: url,
    npm_config_userconfig: npmrc,
    npm_config_cache: path.join(dir, 'npm-cache'),
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    npm_config_fetch_retries: '0',
  };

  return {
    url,
    env,
    async publish(tarball) {
      await run('npm', ['publish', tarball, '--ignore-scripts'], {
        env: { ...process.env, ...env },
        cwd: dir,
      });
    },
    async publishDir(pkgDir) {
      const manifest = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
      const tarball = path.join(dir, `${manifest.name.replace('/', '-')}-${manifest.version}.tgz`);
      await run('tar', [
        '-czf',
        tarball,
        '--exclude=./node_modules',
        '--transform=s,^\\.,package,',
        '-C',
        pkgDir,
        '.',
      ]);
      await putPackage(url, token, manifest, fs.readFileSync(tarball));
    },
    async close() {
      server.closeAllConnections?.();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** What `npm publish` sends: the manifest with its dist, and the tarball as an attachment. */
async function putPackage(url: string, token: string, manifest: any, data: Buffer): Promise<void> {
  const { name, version } = manifest;
  const file = `${name.split('/').pop()}-${version}.tgz`;
  const body = {
    _id: name,
    name,
    'dist-tags': { latest: version },
    versions: {
      [version]: {
        ...manifest,
        _id: `${name}@${version}`,
        dist: {
          shasum: createHash('sha1').update(data).digest('hex'),
          integrity: `sha512-${createHash('sha512').update(data).digest('base64')}`,
          tarball: `${url}${name}/-/${file}`,
        },
      },
    },
    _attachments: {
      [file]: {
        content_type: 'application/octet-stream',
        data: data.toString('base64'),
        length: data.length,
      },
    },
  };
  const answer = await fetch(`${url}${name.replace('/', '%2f')}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  if (!answer.ok) throw new Error(`publishing ${name}@${version}: ${answer.status} ${await answer.text()}`);
}

/**
 * agentbox's production dependencies, as package-lock.json names them, laid into the registry's
 * storage before it starts (the registry has no uplink: an install from it must find them there).
 * Each tarball is the one npm downloaded for this clone's `npm ci`, read from npm's cache by its
 * integrity (content-addressed: no network, the exact bytes npmjs serves).
 */
function seedDependencies(storage: string, cache: string): void {
  const lock = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package-lock.json'), 'utf8'));
  const packuments = new Map<string, any>();
  for (const [where, entry] of Object.entries<any>(lock.packages)) {
    if (where === '' || entry.dev || entry.link) continue;
    const installed = path.join(REPO_ROOT, where, 'package.json');
    // An optional dependency for another platform (node-pty's prebuilt binaries): npm reads its
    // manifest, sees another os/cpu and skips it, so its manifest (from the lock) is all it needs.
    if (!fs.existsSync(installed) && entry.optional) {
      const name = where.slice(where.lastIndexOf('node_modules/') + 'node_modules/'.length);
      const { version, os, cpu } = entry;
      const packument = packuments.get(name) ?? emptyPackument(name, version);
      packument.versions[version] = {
        name,
        version,
        os,
        cpu,
        _id: `${name}@${version}`,
        dist: { integrity: entry.integrity, tarball: `http://localhost/${name}/-/none.tgz` },
      };
      packuments.set(name, packument);
      fs.mkdirSync(path.join(storage, name), { recursive: true });
      continue;
    }
    const manifest = JSON.parse(fs.readFileSync(installed, 'utf8'));
    const { name, version } = manifest;
    const hex = Buffer.from(entry.integrity.split('-')[1], 'base64').toString('hex');
    const content = path.join(
      cache,
      '_cacache/content-v2/sha512',
      hex.slice(0, 2),
      hex.slice(2, 4),
      hex.slice(4),
    );
    if (!fs.existsSync(content))
      throw new Error(
        `${name}@${version} is not in npm's cache (${content}): run npm ci in ${REPO_ROOT} first`,
      );
    const file = `${name.split('/').pop()}-${version}.tgz`;
    fs.mkdirSync(path.join(storage, name), { recursive: true });
    fs.copyFileSync(content, path.join(storage, name, file));
    const packument = packuments.get(name) ?? emptyPackument(name, version);
    const data = fs.readFileSync(content);
    const shasum = createHash('sha1').update(data).digest('hex');
    packument.versions[version] = {
      ...manifest,
      _id: `${name}@${version}`,
      dist: { shasum, integrity: entry.integrity, tarball: `http://localhost/${name}/-/${file}` },
    };
    packument._attachments[file] = { shasum, version };
    packuments.set(name, packument);
  }
  for (const [name, packument] of packuments)
    fs.writeFileSync(path.join(storage, name, 'package.json'), JSON.stringify(packument));
}

/** A registry's record of a package with no version yet. */
function emptyPackument(name: string, version: string): any {
  return {
    _id: name,
    name,
    versions: {},
    'dist-tags': { latest: version },
    time: {},
    _uplinks: {},
    _distfiles: {},
    _attachments: {},
    _rev: '1-0',
  };
}

/**
 * The Claude Code package the install lines name, published as a small stand-in whose `claude`
 * runs the real CLI of this clone: the real package's tarball holds a 200 MB native binary per
 * platform, too big to pack and install several times per test.
 */
export async function publishClaudeCode(registry: Registry, version: string, dir: string): Promise<void> {
  const pkg = path.join(dir, 'claude-code-stand-in');
  fs.mkdirSync(pkg, { recursive: true });
  fs.writeFileSync(
    path.join(pkg, 'package.json'),
    JSON.stringify({ name: '@anthropic-ai/claude-code', version, bin: { claude: 'claude.sh' } }),
  );
  fs.writeFileSync(path.join(pkg, 'claude.sh'), `#!/bin/sh\nexec '${CLAUDE_BIN}' "$@"\n`, { mode: 0o755 });
  await registry.publishDir(pkg);
}
