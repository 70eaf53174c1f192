import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bash, type RequestView, type Rule, text, tool } from '../fixtures/model-server/index.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';
import { waitFor } from '../helpers/pty.js';

/**
 * Issue 39: review → revise on the real Claude Code. One fix run is revised four times: its
 * session goes on (same id, earlier turns sent), each revision is a commit on the run's branch with
 * its record in revisions/<k>/, a detached revision killed with -9 is recovered whole, a revision
 * that breaks runs.verify is reported and refused by merge --yes, and merge applies the whole change
 * once.
 */
describe('agentbox revise', () => {
  let p: Project;
  let name: string;
  let id: string;
  const TASK = 'TASK-REVISE write notes';
  const write = (file: string, content: string) => (r: RequestView) =>
    tool('Write', { file_path: path.join(r.workingDirectory!, file), content });
  /** The first request of revision k: its message is the last user turn. */
  const revisionTurn = (k: number, reply: Rule['reply'], extra: Partial<Rule> = {}): Rule => ({
    when: { lastUserText: `<!-- agentbox: revision ${k} (agentbox revise) -->` },
    reply,
    ...extra,
  });
  /** The later requests of a revision: its message is in the conversation (rules match in order). */
  const laterTurns = (marker: string, reply: Rule['reply']): Rule => ({ when: { anyText: marker }, reply });
  /** Commits on the run's branch since the run started (the main checkout's HEAD). */
  const commits = () =>
    execFileSync('git', ['rev-list', '--count', `HEAD..agentbox/${name}`], {
      cwd: p.repo.dir,
      encoding: 'utf8',
    }).trim();

  beforeAll(async () => {
    p = await project({
      files: {
        'app.txt': 'app\n',
        'check.sh': 'if grep -q BROKEN app.txt; then echo "CHECK-FAILED: app.txt is BROKEN"; exit 1; fi\n',
        // Checks logged, not enforced: a revision that breaks runs.verify still ends REVIEW, marked.
        'agentbox.yaml': 'runs:\n  verify: sh check.sh\nsupervisor:\n  enabled: false\n',
      },
    });
    p.server.setRules([
      { when: { anyText: TASK, turn: 0 }, reply: write('notes.txt', 'one\n') },
      { when: { anyText: TASK, turn: 1 }, reply: text('Wrote notes.txt.') },
    ]);
    const result = await p.agentbox(['fix', TASK]);
    expect(result.code).toBe(0);
    name = p.newest();
    id = name.slice(-6);
    expect(p.state(name).status).toBe('REVIEW');
  }, 120_000);
  afterAll(async () => p?.cleanup());

  it('revision 2 continues the same session with the feedback, and adds a commit on the branch', async () => {
    const before = p.state(name);
    p.server.setRules([
      revisionTurn(2, write('notes.txt', 'two\n')),
      laterTurns('FEEDBACK-2', text('Now notes.txt says two.')),
    ]);
    const first = p.server.requests.length;
    const result = await p.agentbox([
      'revise',
      id,
      'FEEDBACK-2: make it say two',
      '--comment',
      'notes.txt:1',
      'COMMENT-ON-ONE: this line',
    ]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`revising ${name} — revision 2\n`);
    expect(result.stdout).toMatch(
      new RegExp(
        `\\nrevision 2 · runs\\.verify passed · \\$[0-9.]+ · [0-9.]+m?s — its own change: agentbox diff ${id} --revision 2\\n$`,
      ),
    );
    const request = p.server.requests.slice(first)[0]!.view;
    expect(request.sessionId).toBe(before.session_id);
    expect(request.lastUserText).toContain('FEEDBACK-2: make it say two');
    expect(request.lastUserText).toContain('this is revision 2');
    // The line comment: its place, its text, and the hunk it is on with the line marked.
    expect(request.lastUserText).toContain(
      '### 1. notes.txt:1\n\nCOMMENT-ON-ONE: this line\n\nThe hunk of your change it is on (the line marked with ←):\n```diff\n@@ -0,0 +1 @@\n+one  ←\n```',
    );
    // The earlier turns are in the request: the task, and the first Write.
    const conversation = JSON.stringify(request.body.messages);
    expect(conversation).toContain(TASK);
    expect(conversation).toContain('one\\n');
    const state = p.state(name);
    expect(state).toMatchObject({ status: 'REVIEW', session_id: before.session_id, revision: { number: 2 } });
    expect(state.result_commit).not.toBe(before.result_commit);
    expect(
      execFileSync('git', ['rev-parse', `${state.result_commit}^`], {
        cwd: p.repo.dir,
        encoding: 'utf8',
      }).trim(),
    ).toBe(before.result_commit);
    expect(commits()).toBe('2');
  });

  it('keeps every revision: revisions/<k>/ with the feedback, the whole change, the interdiff', () => {
    const dir = p.runDir(name);
    const one = JSON.parse(fs.readFileSync(path.join(dir, 'revisions/1/revision.json'), 'utf8'));
    const two = JSON.parse(fs.readFileSync(path.join(dir, 'revisions/2/revision.json'), 'utf8'));
    expect(one).toMatchObject({ revision: 1, status: 'REVIEW', verified: true, feedback: null });
    expect(two).toMatchObject({ revision: 2, status: 'REVIEW', verified: true, feedback: 'feedback.md' });
    expect(two.from_commit).toBe(one.commit);
    expect(two.cost_usd).toBeGreaterThan(0);
    expect(fs.readFileSync(path.join(dir, 'revisions/2/feedback.md'), 'utf8')).toMatch(
      /^FEEDBACK-2: make it say two\n\n## Line comments\n\n### 1\. notes\.txt:1\n/,
    );
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'revisions/2/review.json'), 'utf8'))).toEqual({
      message: 'FEEDBACK-2: make it say two',
      comments: [{ file: 'notes.txt', line: 1, text: 'COMMENT-ON-ONE: this line' }],
    });
    // changes.patch stays the whole change against the start; the interdiff is the revision's own.
    const whole = p.read(name, 'changes.patch');
    expect(whole).toContain('new file mode');
    expect(whole).toContain('+two');
    expect(fs.readFileSync(path.join(dir, 'revisions/2/changes.patch'), 'utf8')).toBe(whole);
    const inter = fs.readFileSync(path.join(dir, 'revisions/2/interdiff.patch'), 'utf8');
    expect(inter).toContain('-one');
    expect(inter).toContain('+two');
    expect(inter).not.toContain('new file mode');
  });

  it('diff shows the whole change; diff --revision 2 only the revision', async () => {
    const whole = await p.agentbox(['diff', id, '--no-pager']);
    expect(whole.stdout).toContain('new file mode');
    expect(whole.stdout).toContain('+two');
    expect(whole.stdout).not.toContain('-one');
    const two = await p.agentbox(['diff', id, '--revision', '2', '--no-pager']);
    expect(two.code).toBe(0);
    expect(two.stdout).toContain('-one');
    expect(two.stdout).toContain('+two');
    expect(two.stdout).not.toContain('new file mode');
    const one = await p.agentbox(['diff', id, '--revision', '1', '--no-pager']);
    expect(one.stdout).toContain('+one');
  });

  it('status, status --json and show say which revision the run is on', async () => {
    const status = await p.agentbox(['status']);
    expect(status.stdout).toMatch(new RegExp(`${id}\\s+fix\\s+REVIEW r2 `));
    // --all folds INDEX.jsonl instead of reading state files: the log carries the revision too.
    const all = await p.agentbox(['status', '--all']);
    expect(all.stdout).toMatch(new RegExp(`${id}\\s+fix\\s+REVIEW r2 `));
    expect(JSON.parse((await p.agentbox(['show', id, '--json'])).stdout).state.revision).toMatchObject({
      number: 2,
    });
    const json = JSON.parse((await p.agentbox(['status', '--json'])).stdout);
    expect(json.runs.find((r: { name: string }) => r.name === name).revision).toBe(2);
    const show = await p.agentbox(['show', id]);
    expect(show.stdout).toContain(
      `  revision    2 (each in revisions/<k>/; its own change: agentbox diff ${id} --revision 2)`,
    );
  });

  it('a review left empty in the editor aborts: nothing is sent, nothing changes', async () => {
    const editor = path.join(p.repo.dir, '..', `empty-${id}.sh`);
    fs.writeFileSync(editor, ': > "$1"\n');
    const before = p.server.requests.length;
    const aborted = await p.agentbox(['revise', id, '--edit'], {
      env: { EDITOR: `sh ${editor}`, VISUAL: '' },
    });
    expect(aborted.code).toBe(2);
    expect(aborted.stderr).toContain('the review is empty (the file was left empty): nothing was sent');
    expect(p.server.requests.length).toBe(before);
    expect(p.state(name)).toMatchObject({ status: 'REVIEW', revision: { number: 2 } });
    expect(fs.existsSync(path.join(p.runDir(name), 'revisions/3'))).toBe(false);
  });

  it('a detached revision killed with -9 is recovered whole: same session, nothing lost', async () => {
    const session = p.state(name).session_id;
    p.server.setRules([
      // The revision's first turn never answers: its agentbox is killed while claude waits.
      revisionTurn(3, { text: 'never', delayMs: 120_000 }, { times: 1 }),
      { when: { anyText: 'FEEDBACK-3' }, reply: write('notes.txt', 'three\n'), times: 1 },
      laterTurns('FEEDBACK-3', text('Now notes.txt says three.')),
    ]);
    const detached = await p.agentbox(['revise', id, '--detach', 'FEEDBACK-3: make it say three']);
    expect(detached.code).toBe(0);
    expect(detached.stdout).toContain(`follow it: agentbox watch ${id}`);
    await waitFor(
      () => p.server.requests.some((r) => r.view.lastUserText.includes('revision 3 (agentbox revise)')),
      'the revision to reach the model',
      { timeoutMs: 60_000 },
    );
    const { pid } = p.state(name);
    expect(p.state(name)).toMatchObject({ status: 'ACTIVE', revision: { number: 3 } });
    process.kill(pid, 'SIGKILL');
    await waitFor(() => !alive(pid), 'the worker to die');
    const first = p.server.requests.length;
    const recovered = await p.agentbox(['recover', id]);
    expect(recovered.code).toBe(0);
    const request = p.server.requests.slice(first)[0]!.view;
    expect(request.sessionId).toBe(session);
    expect(request.allText).toContain('FEEDBACK-3: make it say three');
    expect(p.state(name)).toMatchObject({ status: 'REVIEW', session_id: session, revision: { number: 3 } });
    expect(p.read(name, 'revisions/3/feedback.md')).toBe('FEEDBACK-3: make it say three\n');
    expect(JSON.parse(p.read(name, 'revisions/3/revision.json'))).toMatchObject({
      revision: 3,
      status: 'REVIEW',
    });
    expect(p.read(name, 'revisions/3/interdiff.patch')).toContain('+three');
    expect(p.read(name, 'changes.patch')).toContain('+three');
    expect(commits()).toBe('3');
  });

  it('a revision that breaks runs.verify is reported, and merge --yes refuses it', async () => {
    p.server.setRules([
      revisionTurn(4, write('app.txt', 'BROKEN\n')),
      laterTurns('FEEDBACK-4', text('Changed app.txt.')),
    ]);
    const result = await p.agentbox(['revise', id, 'FEEDBACK-4: change app.txt']);
    expect(result.stdout).toMatch(/^revision 4 · runs\.verify FAILED · /m);
    expect(result.stdout).toContain(`✗ revision 4 broke runs.verify: merge --yes refuses it`);
    expect(p.state(name)).toMatchObject({
      status: 'REVIEW',
      output: { verified: false },
      revision: { number: 4 },
    });
    expect(JSON.parse(p.read(name, 'revisions/4/revision.json'))).toMatchObject({
      revision: 4,
      verified: false,
    });
    // The person looks at the new whole change (merge --yes refuses a patch changed since last shown).
    await p.agentbox(['diff', id, '--no-pager']);
    const merge = await p.agentbox(['merge', id, '--yes']);
    expect(merge.code).not.toBe(0);
    expect(merge.stderr).toContain('runs.verify FAILED');
    expect(merge.stderr).toContain('it ended REVIEW but its checks failed');
    expect(fs.readFileSync(path.join(p.repo.dir, 'app.txt'), 'utf8')).toBe('app\n');
  });

  it('merge applies the whole change of the last revision, once', async () => {
    p.server.setRules([
      revisionTurn(5, write('app.txt', 'fixed\n')),
      laterTurns('FEEDBACK-5', text('Fixed app.txt.')),
    ]);
    // Written in the editor: the message on top, a comment under the line it is about.
    const editor = path.join(p.repo.dir, '..', `edit-${id}.sh`);
    fs.writeFileSync(
      editor,
      `sed -i -e '1s/^/FEEDBACK-5: fix app.txt/' -e 's/^+BROKEN$/+BROKEN\\n> COMMENT-ON-BROKEN/' "$1"\n`,
    );
    const first = p.server.requests.length;
    const edited = await p.agentbox(['revise', id, '--edit', '--json'], {
      env: { EDITOR: `sh ${editor}`, VISUAL: '' },
    });
    expect(edited.stderr).toBe('');
    expect(edited.code).toBe(0);
    // --json: one document, the run's summary with the revision that just ended.
    expect(JSON.parse(edited.stdout)).toMatchObject({
      run: name,
      status: 'REVIEW',
      revision: { number: 5, verified: true },
    });
    const sent = p.server.requests[first]!.view.lastUserText;
    expect(sent).toContain(
      'FEEDBACK-5: fix app.txt\n\n## Line comments\n\n### 1. app.txt:1\n\nCOMMENT-ON-BROKEN',
    );
    expect(sent).toContain('+BROKEN  ←');
    expect(sent).not.toContain('# agentbox revise');
    expect(p.state(name)).toMatchObject({ status: 'REVIEW', output: { verified: true } });
    // changes.patch changed after the run ended (it no longer is the result commit): diff shows it
    // not (it showed the commit and recorded the edited patch's hash as seen), merge applies it not.
    const patchFile = path.join(p.runDir(name), 'changes.patch');
    const kept = fs.readFileSync(patchFile, 'utf8');
    fs.writeFileSync(patchFile, kept.replace('+fixed', '+TAMPERED'));
    const notResult = `the changes.patch of ${name} is not the run's result (commit `;
    for (const args of [
      ['diff', id, '--no-pager'],
      ['diff', id, '--json'],
      ['merge', id, '--yes'],
    ]) {
      const refused = await p.agentbox(args);
      expect(refused.code, args.join(' ')).not.toBe(0);
      expect(refused.stderr).toContain(notResult);
      expect(refused.stdout).not.toContain('TAMPERED');
    }
    expect(fs.readFileSync(path.join(p.repo.dir, 'app.txt'), 'utf8')).toBe('app\n');
    fs.writeFileSync(patchFile, kept);
    await p.agentbox(['diff', id, '--no-pager']);
    const merge = await p.agentbox(['merge', id, '--yes']);
    expect(merge.stderr).toBe('');
    expect(merge.code).toBe(0);
    expect(fs.readFileSync(path.join(p.repo.dir, 'notes.txt'), 'utf8')).toBe('three\n');
    expect(fs.readFileSync(path.join(p.repo.dir, 'app.txt'), 'utf8')).toBe('fixed\n');
    expect(commits()).toBe('5');
  });

  it('refuses what cannot be revised: what, the value, the next command', async () => {
    const merged = await p.agentbox(['revise', id, 'more']);
    expect(merged.code).toBe(2);
    expect(merged.stderr).toContain(`run ${name} is already MERGED`);
    expect(merged.stderr).toContain('agentbox fix');
    // Every refusal is logged: the review left empty in the editor earlier, then this one.
    expect(p.events(name).filter((e) => e.event === 'revise_refused')).toEqual([
      expect.objectContaining({ reason: expect.stringContaining('the review is empty') }),
      expect.objectContaining({ reason: expect.stringContaining('is already MERGED') }),
    ]);
  });

  it('watch follows a detached revision and stop ends it: ABORTED, its record kept; then revise refuses it', async () => {
    const task = 'TASK-REVISE-STOP write a file';
    p.server.setRules([
      { when: { anyText: task, turn: 0 }, reply: write('stop.txt', 'one\n') },
      {
        when: { anyText: task, lastUserText: 'agentbox revise' },
        reply: { text: 'never', delayMs: 120_000 },
      },
      { when: { anyText: task }, reply: text('Wrote stop.txt.') },
    ]);
    expect((await p.agentbox(['fix', task])).code).toBe(0);
    const other = p.newest();
    const otherId = other.slice(-6);
    expect((await p.agentbox(['revise', otherId, '--detach', 'FEEDBACK-STOP'])).code).toBe(0);
    await waitFor(
      () =>
        p.server.requests.some(
          (r) => r.view.allText.includes(task) && r.view.lastUserText.includes('FEEDBACK-STOP'),
        ),
      'the revision to reach the model',
      { timeoutMs: 60_000 },
    );
    const watching = p.agentbox(['watch', otherId]);
    await new Promise((r) => setTimeout(r, 500));
    expect((await p.agentbox(['stop', otherId])).code).toBe(0);
    const watched = await watching;
    expect(watched.stdout).toContain(`${other} — fix: ${task} — revision 2\n`);
    expect(watched.stdout).toContain(
      "revision 2: the person's review is the agent's next turn — FEEDBACK-STOP",
    );
    expect(watched.stdout).toContain(`✗ ${other} — ABORTED`);
    expect(p.state(other)).toMatchObject({
      status: 'ABORTED',
      failure: { kind: 'killed' },
      revision: { number: 2 },
    });
    expect(JSON.parse(p.read(other, 'revisions/2/revision.json'))).toMatchObject({
      revision: 2,
      status: 'ABORTED',
    });
    const refused = await p.agentbox(['revise', otherId, 'more']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`run ${other} is ABORTED; only a run in REVIEW can be revised`);
    expect(refused.stderr).toContain(`agentbox resume ${otherId} "<instructions>"`);
  });

  it('a revision that undoes the whole change leaves the run in REVIEW with no change: the conversation goes on', async () => {
    const task = 'TASK-REVISE-UNDO write undo.txt';
    p.server.setRules([
      revisionTurn(2, bash('rm undo.txt')),
      revisionTurn(3, write('undo.txt', 'again\n')),
      laterTurns('FEEDBACK-AGAIN', text('Wrote it again.')),
      laterTurns('FEEDBACK-UNDO', text('Removed it.')),
      { when: { anyText: task, turn: 0 }, reply: write('undo.txt', 'one\n') },
      { when: { anyText: task }, reply: text('Wrote undo.txt.') },
    ]);
    expect((await p.agentbox(['fix', task])).code).toBe(0);
    const run = p.newest();
    const runId = run.slice(-6);
    const undone = await p.agentbox(['revise', runId, 'FEEDBACK-UNDO remove it']);
    expect(undone.code, undone.stderr).toBe(0);
    // It was DONE, and revise then refused it: "only a run in REVIEW can be revised".
    expect(p.state(run)).toMatchObject({ status: 'REVIEW', revision: { number: 2 } });
    const left = `no change is left: revise it (agentbox revise ${runId} "…"), or discard it (agentbox discard ${runId})`;
    expect(undone.stdout).toContain(`next          ${left}`);
    expect((await p.agentbox(['show', runId])).stdout).toContain(left);
    const merge = await p.agentbox(['merge', runId, '--yes']);
    expect(merge.code).not.toBe(0);
    expect(merge.stderr).toContain('has no changes to merge');
    const again = await p.agentbox(['revise', runId, 'FEEDBACK-AGAIN write it again']);
    expect(again.code, again.stderr).toBe(0);
    expect(p.state(run)).toMatchObject({ status: 'REVIEW', revision: { number: 3 } });
    expect(p.read(run, 'changes.patch')).toContain('+again');
    // Its rerun says that the two reviews stay with it: the task alone starts anew.
    const rerun = await p.agentbox(['rerun', runId]);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(rerun.stdout).toContain(
      `rerun of ${run} (fix), with today's templates and configuration · not its 2 reviews (revise sends those; they stay in its revisions/)`,
    );
  });

  it('leaves no process behind', async () => {
    await expectNoProcessesLeft(p.tag);
  });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
