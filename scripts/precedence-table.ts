/**
 * Writes the config-precedence table (src/config/precedence.ts) between its markers in
 * docs/configuration.md and docs/security.md: `npx tsx scripts/precedence-table.ts` after a change
 * to src/config/rules.ts (test/unit/config-rules.test.ts fails until then).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { precedenceTable } from '../src/config/precedence.js';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const block = /<!-- config-precedence:start -->\n[\s\S]*?\n<!-- config-precedence:end -->/;
for (const doc of ['docs/configuration.md', 'docs/security.md']) {
  const file = path.join(root, doc);
  const text = fs.readFileSync(file, 'utf8');
  if (!block.test(text)) throw new Error(`${doc}: no <!-- config-precedence:start/end --> markers`);
  const table = `<!-- config-precedence:start -->\n${precedenceTable()}\n<!-- config-precedence:end -->`;
  fs.writeFileSync(
    file,
    text.replace(block, () => table),
  );
  console.log(`${doc}: table written`);
}
