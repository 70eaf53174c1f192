#!/usr/bin/env node
// `agentbox --version` answers here, before the bundle loads: most of what it would cost
// (measured in bench/status.bench.ts). Everything else goes to dist/cli/main.cjs, the one place
// that exits, its chunks compiled from V8's code cache when there is one (./code-cache.cjs).
// CommonJS, like the bundle: on node 20 an ES module entry alone costs ~4 ms more.
'use strict';
const path = require('node:path');
const args = process.argv.slice(2);
/** The commands a resident agentbox runs (src/resident/protocol.ts, SERVED_COMMANDS). */
const SERVED = new Set(['scout', 'plan', 'review', 'fix', 'revise']);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-v')) {
  const fs = require('node:fs');
  const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8'));
  // (not process.stdout: making it for a pipe costs ~4 ms, more than the rest of this answer)
  fs.writeSync(1, `${pkg.version}\n`);
} else if (args.some((arg) => SERVED.has(arg))) {
  // A command `agentbox serve` may run (docs/resident.md): handed to it when it runs, else here.
  // None running: this process runs it, and may start one for the next command as it exits.
  const root = path.join(__dirname, '..');
  const client = require(path.join(root, 'dist', 'resident', 'client.cjs'));
  client.tryResident(root, args).then((code) => {
    if (code !== null) {
      process.exitCode = code;
      return;
    }
    client.startResidentOnExit(root);
    runHere();
  });
} else {
  runHere();
}

function runHere() {
  const dist = path.join(__dirname, '..', 'dist', 'cli');
  if (process.env.AGENTBOX_CODE_CACHE !== '0') {
    require('./code-cache.cjs').installCodeCache(dist, path.join(__dirname, '..', '.v8-cache'));
  }
  require(path.join(dist, 'main.cjs'));
}
