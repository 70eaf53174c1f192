#!/usr/bin/env node
// `agentbox --version` answers here, before the bundle loads: most of what it would cost
// (measured in bench/status.bench.ts). Everything else goes to dist/cli/main.js, the one place that
// exits.
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-v')) {
  const { readFileSync } = await import('node:fs');
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  process.stdout.write(`${pkg.version}\n`);
} else {
  await import('../dist/cli/main.js');
}
