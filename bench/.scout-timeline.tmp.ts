// temporary: timeline of one scout (strace execve/exit), not committed
import { spawn } from 'node:child_process';
import path from 'node:path';
import { startModelServer, text } from '../test/fixtures/model-server/index.js';
import { CLAUDE_BIN, claudeEnv, claudeHome } from '../test/helpers/claude.js';
import { gitRepo } from '../test/helpers/git-repo.js';

const BIN = path.resolve('bin/agentbox.cjs');
const server = await startModelServer([{ when: {}, reply: text('`greet(name)` returns `hello <name>`.') }]);
const home = claudeHome();
const repo = gitRepo({ files: { 'src/greet.js': 'module.exports = (name) => "hello " + name;\n' } });
const env = { ...claudeEnv({ home, modelUrl: server.url }), AGENTBOX_CLAUDE_BIN: CLAUDE_BIN };
const run = (argv: string[]) =>
  new Promise<void>((resolve) => {
    const c = spawn(argv[0], argv.slice(1), { cwd: repo.dir, env, stdio: 'inherit' });
    c.on('exit', () => resolve());
  });
await run([process.execPath, BIN, 'init']);
repo.commit('agentbox init');
for (let i = 0; i < 2; i++) await run([process.execPath, BIN, 'scout', 'what does greet() return?']);
const mode = process.argv[2] ?? 'strace';
if (mode === 'strace')
  await run([
    'strace',
    '-f',
    '-tt',
    '-e',
    'trace=execve,exit_group',
    '-o',
    '/tmp/ph/scout.strace',
    process.execPath,
    BIN,
    'scout',
    'what does greet() return?',
  ]);
else if (mode === 'loads')
  await run([process.execPath, '-r', '/tmp/ph/loadlog.cjs', BIN, 'scout', 'what does greet() return?']);
else
  await run([
    process.execPath,
    '--cpu-prof',
    '--cpu-prof-dir=/tmp/ph/scoutprof',
    '--cpu-prof-interval',
    '100',
    BIN,
    'scout',
    'what does greet() return?',
  ]);
await server.close();
home.cleanup();
repo.cleanup();
