/** The project the demo's agent works on: a greeter with a bug, and the test the fix adds. */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { type Context, DemoFailure } from './steps.js';

export const SCOUT_QUESTION = 'why does greet() print undefined?';
export const FIX_TASK = 'make greet() use the name it is given and add a test';

export const BUGGY_LINE = 'function greet({ name }) {';
export const FIXED_LINE = 'function greet(name) {';

export const PROJECT_FILES: Record<string, string> = {
  'README.md': '# greeter\n\nSays hello: `node src/cli.js Ada`.\n',
  'package.json': `${JSON.stringify(
    { name: 'greeter', version: '1.0.0', private: true, scripts: { start: 'node src/cli.js' } },
    null,
    2,
  )}\n`,
  'src/greet.js': [
    "'use strict';",
    '',
    "/** The greeting for one person: greet('Ada') is 'Hello, Ada!'. */",
    BUGGY_LINE,
    "  return 'Hello, ' + name + '!';",
    '}',
    '',
    'module.exports = { greet };',
    '',
  ].join('\n'),
  'src/cli.js': [
    '#!/usr/bin/env node',
    "'use strict';",
    '',
    "const { greet } = require('./greet.js');",
    '',
    "console.log(greet(process.argv[2] ?? 'world'));",
    '',
  ].join('\n'),
};

export const NEW_TEST = [
  "'use strict';",
  '',
  "const assert = require('node:assert/strict');",
  "const { greet } = require('../src/greet.js');",
  '',
  "assert.equal(greet('Ada'), 'Hello, Ada!');",
  "assert.equal(greet('world'), 'Hello, world!');",
  "console.log('ok - greet() uses the name it is given');",
  '',
].join('\n');

/** 1-based line of `needle` in a project file, for the file:line references the "model" gives. */
export function lineOf(file: string, needle: string): number {
  const index = (PROJECT_FILES[file] ?? '').split('\n').findIndex((l) => l.includes(needle));
  if (index < 0) throw new Error(`demo script: "${needle}" is not in ${file}`);
  return index + 1;
}

export function writeProject(dir: string): void {
  for (const [file, content] of Object.entries(PROJECT_FILES)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), content);
  }
}

/** The first commit, made quietly before the demo starts talking: it is not what the demo shows. */
export async function commitProject(ctx: Context): Promise<void> {
  const run = (args: string[]) =>
    new Promise<void>((resolve, reject) => {
      const child = spawn('git', args, {
        cwd: ctx.project,
        env: ctx.env,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let err = '';
      child.stderr.on('data', (d) => {
        err += d;
      });
      child.once('error', reject);
      child.once('close', (code) =>
        code === 0 ? resolve() : reject(new DemoFailure(`git ${args.join(' ')} failed: ${err.trim()}`)),
      );
    });
  await run(['init', '--quiet']);
  await run(['symbolic-ref', 'HEAD', 'refs/heads/main']);
  await run(['config', 'user.name', 'Demo Developer']);
  await run(['config', 'user.email', 'dev@greeter.invalid']);
  await run(['config', 'commit.gpgsign', 'false']);
  await run(['add', '-A']);
  await run(['commit', '--quiet', '-m', 'greeter: say hello']);
}
