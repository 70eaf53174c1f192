import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type GitCall, git } from './git.js';
import { PUBLICATION_FILE } from './refs.js';

/** The tree of `files` (and the publication file) written through a private index. */
export async function writePublicationTree(
  call: GitCall,
  dir: string,
  files: readonly string[],
  publication: string,
): Promise<string> {
  const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'agentbox-publish-'));
  try {
    const indexed = { ...call, extra: { GIT_INDEX_FILE: path.join(temp, 'index') } };
    const paths = files.map((f) => path.join(dir, f)).join('\n');
    const blobs = (
      await git({ ...call, input: `${paths}\n` }, ['hash-object', '-w', '--no-filters', '--stdin-paths'])
    )
      .split('\n')
      .filter(Boolean);
    const own = await git({ ...call, input: publication }, ['hash-object', '-w', '--no-filters', '--stdin']);
    const entries = [
      ...files.map((f, i) => `100644 ${blobs[i]}\t${f}\0`),
      `100644 ${own}\t${PUBLICATION_FILE}\0`,
    ];
    await git({ ...indexed, input: entries.join('') }, ['update-index', '-z', '--add', '--index-info']);
    return await git(indexed, ['write-tree']);
  } finally {
    fs.rmSync(temp, { recursive: true, force: true });
  }
}
