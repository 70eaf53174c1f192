import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runAgentbox } from '../helpers/bin.js';
import { tempDir } from '../helpers/git-repo.js';

describe('test/helpers/bin.ts runAgentbox', () => {
  it('a child that exits without reading its input is a result, not an uncaught EPIPE (seen beside a second suite: issue 36)', async () => {
    const dir = tempDir('agentbox-helper-bin-');
    const bin = path.join(dir, 'exits.cjs');
    fs.writeFileSync(bin, 'process.stdin.destroy(); process.exit(3);\n');
    // Far more than a pipe holds: the write is still going when the child is gone.
    const input = 'x'.repeat(8 * 1024 * 1024);
    for (let i = 0; i < 3; i++) {
      const result = await runAgentbox([], { cwd: dir, env: { PATH: process.env.PATH! }, bin, input });
      expect(result.code).toBe(3);
    }
  });
});
