/**
 * What the bin imports. `agentbox --version` answers here, before the command table and its
 * modules load: that is most of what the version costs (measured in bench/status.bench.ts).
 * Everything else goes to main, the one place that exits.
 */
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-v')) {
  const { VERSION } = await import('../version.js');
  process.stdout.write(`${VERSION}\n`);
} else {
  await import('./main.js');
}
