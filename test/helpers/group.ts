import fs from 'node:fs';
import path from 'node:path';
import { hang, type RequestView, type Rule, text, tool } from '../fixtures/model-server/index.js';

/*
 * A project and a scripted model for groups (`agentbox fix --attempts N`, issue 31): the attempts
 * of one task differ by what the model plays in each (the prompt says "attempt k of N").
 *  - pass: sets x to 42 (runs.verify passes) and answers in the contract's shape;
 *  - fail: sets x to 2 — runs.verify fails, is corrected twice, and the run ends ABORTED;
 *  - violate: sets x to 42 but answers without the required section — ends on the contract;
 *  - hang: its first model request never gets an answer (until the run is stopped).
 */

export type Play = 'pass' | 'fail' | 'violate' | 'hang';

const CONTRACT = `---
required_sections: [Summary]
---
# fix report: {{run}} (attempt {{attempt}} of {{attempts}})

## Summary
What you changed, in one sentence.
`;

/** The files of a group project: x to set, a check that wants 42, the contract, and runs.verify. */
export const GROUP_FILES: Record<string, string> = {
  'src/app.ts': 'export const x = 1;\n',
  'test.sh': 'grep -q 42 src/app.ts || { echo "x is not 42"; exit 1; }\n',
  '.agentbox/templates/fix.output.md': CONTRACT,
  'agentbox.yaml': 'runs:\n  verify: sh test.sh\n',
};

const edit = (value: number) => (r: RequestView) =>
  tool('Edit', {
    file_path: path.join(r.workingDirectory!, 'src/app.ts'),
    old_string: 'export const x = 1;',
    new_string: `export const x = ${value};`,
  });

/** The rules that play `plays[k-1]` in attempt k of `plays.length`, for `task`. */
export function attemptRules(task: string, plays: readonly Play[]): Rule[] {
  const n = plays.length;
  return plays.flatMap((play, i): Rule[] => {
    const when = {
      anyText: task,
      predicate: (r: RequestView) => r.allText.includes(`attempt ${i + 1} of ${n} `),
    };
    if (play === 'hang') return [{ name: `attempt ${i + 1} hangs`, when, reply: hang() }];
    const value = play === 'fail' ? 2 : 42;
    const answer = play === 'violate' ? 'I set x.' : `## Summary\nSet x to ${value} (attempt ${i + 1}).`;
    return [
      { name: `attempt ${i + 1} edits`, when: { ...when, turn: 0 }, reply: edit(value) },
      { name: `attempt ${i + 1} answers`, when, reply: text(answer) },
    ];
  });
}

/** The group folders of a project, oldest first. */
export function groupNames(root: string): string[] {
  const dir = path.join(root, '.agents', 'groups');
  return fs.existsSync(dir) ? fs.readdirSync(dir).sort() : [];
}

/** A group's group.json and state.json. */
export function readGroupFiles(root: string, name: string): { meta: any; state: any; dir: string } {
  const dir = path.join(root, '.agents', 'groups', name);
  const json = (f: string) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
  return { meta: json('group.json'), state: json('state.json'), dir };
}

/** The group whose task is `task` (names sort by slug within a minute, so not by order). */
export function groupOfTask(root: string, task: string): string {
  const found = groupNames(root).find((name) => readGroupFiles(root, name).meta.task === task);
  if (!found) throw new Error(`no group for task ${task}`);
  return found;
}
