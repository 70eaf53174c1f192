import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { copySessionTranscript } from '../../src/interactive/transcript-copy.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'agentbox-transcript-copy-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const ID = '3b41f735-7d59-4de9-8870-cb2289a297ae';
let n = 0;
/** A Claude config folder with a project folder, and a run folder. */
function setup() {
  const base = path.join(root, `case-${n++}`);
  const config = path.join(base, 'config');
  const project = path.join(config, 'projects', '-tmp-repo');
  const run = path.join(base, 'run');
  fs.mkdirSync(project, { recursive: true });
  fs.mkdirSync(run, { recursive: true });
  const secret = path.join(base, 'id_ed25519');
  fs.writeFileSync(secret, 'PRIVATE-KEY-4711\n');
  return { config, file: path.join(project, `${ID}.jsonl`), run, secret };
}
const copied = (run: string) => path.join(run, 'raw', 'transcript.jsonl');
const events = (run: string) =>
  fs.existsSync(path.join(run, 'events.jsonl'))
    ? fs
        .readFileSync(path.join(run, 'events.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
    : [];

describe("copying an interactive session's transcript into its run", () => {
  it('copies the session file, byte for byte, into raw/transcript.jsonl', () => {
    const s = setup();
    const body = `${JSON.stringify({ type: 'user', message: { role: 'user', content: 'hi ✓' } })}\n`.repeat(
      5000,
    );
    fs.writeFileSync(s.file, body);
    expect(copySessionTranscript(s.run, s.config, ID)).toBe(copied(s.run));
    expect(fs.readFileSync(copied(s.run), 'utf8')).toBe(body);
    expect(fs.readdirSync(path.join(s.run, 'raw'))).toEqual(['transcript.jsonl']);
  });

  it('has nothing to copy without a session id or a file', () => {
    const s = setup();
    expect(copySessionTranscript(s.run, s.config, null)).toBeNull();
    expect(copySessionTranscript(s.run, s.config, ID)).toBeNull();
    expect(fs.existsSync(copied(s.run))).toBe(false);
  });

  // The agent can write in Claude Code's config folder: a link there must not pull another file
  // into the ledger (which `agentbox push` may publish). Each spelling is refused and logged.
  it.each([
    ['a link to a key', (s: ReturnType<typeof setup>) => fs.symlinkSync(s.secret, s.file)],
    [
      'a relative link',
      (s: ReturnType<typeof setup>) => fs.symlinkSync(path.relative(path.dirname(s.file), s.secret), s.file),
    ],
    [
      'a link to a link',
      (s: ReturnType<typeof setup>) => {
        const hop = path.join(path.dirname(s.file), 'hop');
        fs.symlinkSync(s.secret, hop);
        fs.symlinkSync(hop, s.file);
      },
    ],
    [
      'a fifo that would hang the end of the session',
      (s: ReturnType<typeof setup>) => {
        fs.rmSync(s.file, { force: true });
        execFileSync('mkfifo', [s.file]);
      },
    ],
  ])('refuses %s, and logs the refusal', (_label, plant) => {
    const s = setup();
    plant(s);
    expect(copySessionTranscript(s.run, s.config, ID)).toBeNull();
    expect(fs.existsSync(copied(s.run))).toBe(false);
    expect(events(s.run)).toEqual([
      expect.objectContaining({ event: 'refused', source: 'agentbox', tool: 'transcript copy' }),
    ]);
  });
});
