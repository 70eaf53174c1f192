import fs from 'node:fs';
import path from 'node:path';
import { AgentboxError, errnoCode, fsError } from '../errors.js';
import { renderIndexMd } from './index-md.js';
import { ledgerPaths } from './paths.js';

/**
 * Creates whatever is missing of `.agents/{runs,pointers}`, INDEX.jsonl and INDEX.md; never
 * touches what exists, so `init` can call it every time. `created` lists what it made, relative to
 * the repo root (folders end in `/`); empty means there was nothing to do.
 */
export function ensureLedger(root: string): { created: string[] } {
  const ledger = ledgerPaths(root);
  const created: string[] = [];
  const rel = (p: string) => path.relative(root, p);
  for (const dir of [ledger.dir, ledger.runsDir, ledger.pointersDir]) {
    try {
      fs.mkdirSync(dir);
      created.push(`${rel(dir)}/`);
    } catch (error) {
      if (errnoCode(error) !== 'EEXIST') throw fsError(error, 'create the folder', dir);
      if (!fs.statSync(dir).isDirectory()) {
        throw new AgentboxError('IO_FAILED', `${dir} exists but is not a folder`, {
          hint: `move it out of the way (mv ${dir} ${dir}.bak) and run "agentbox init" again`,
        });
      }
    }
  }
  const files: [string, string][] = [
    [ledger.indexJsonl, ''],
    [ledger.indexMd, renderIndexMd(new Map())],
  ];
  for (const [file, content] of files) {
    try {
      fs.writeFileSync(file, content, { flag: 'wx' });
      created.push(rel(file));
    } catch (error) {
      if (errnoCode(error) !== 'EEXIST') throw fsError(error, 'create', file);
    }
  }
  return { created };
}
