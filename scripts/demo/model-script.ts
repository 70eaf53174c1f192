/** What the stand-in model answers: one scripted rule per turn of each run. */
import path from 'node:path';
import { bash, type RequestView, type Rule, text, tool } from '../../test/fixtures/model-server/index.js';
import { BUGGY_LINE, FIX_TASK, FIXED_LINE, lineOf, NEW_TEST, SCOUT_QUESTION } from './project.js';

/** The absolute path of a project file in the directory Claude Code works in (repo or worktree). */
function inWorkdir(req: RequestView, file: string): string {
  if (!req.workingDirectory) throw new Error('the request names no working directory');
  return path.join(req.workingDirectory, file);
}

/**
 * One rule per turn of a run, matched by the run's task text (it is in every request of the
 * run), so the two runs never take each other's answers.
 */
function byTurn(run: string, task: string, replies: Rule['reply'][]): Rule[] {
  return replies.map((reply, turn) => ({
    name: `${run} turn ${turn}`,
    when: { anyText: task, turn },
    reply,
  }));
}

/** The scout and the fix run, their answers citing the code by file:line. */
export function modelScript(): Rule[] {
  const bug = `src/greet.js:${lineOf('src/greet.js', BUGGY_LINE)}`;
  const caller = `src/cli.js:${lineOf('src/cli.js', 'greet(process.argv')}`;
  return [...scoutRules(bug, caller), ...fixRules(bug)];
}

/** The scout reads greet() and its caller, then explains the bug. */
function scoutRules(bug: string, caller: string): Rule[] {
  return byTurn('scout', SCOUT_QUESTION, [
    (req) => ({
      text: 'Let me read greet() and the code that calls it.',
      tools: [
        { name: 'Read', input: { file_path: inWorkdir(req, 'src/greet.js') } },
        { name: 'Read', input: { file_path: inWorkdir(req, 'src/cli.js') } },
      ],
    }),
    () =>
      text(
        [
          '## Why greet() prints "undefined"',
          '',
          `\`greet\` destructures its argument — \`${BUGGY_LINE}\` (${bug}) — so it reads the \`name\``,
          `*property* of what it is given. Its caller passes the name itself, a string (${caller}:`,
          "`greet(process.argv[2] ?? 'world')`), and a string has no `name` property: `name` is",
          '`undefined` and the template renders `Hello, undefined!`.',
          '',
          `**Fix:** take the string — \`${FIXED_LINE}\`. No caller passes an object. There is no`,
          "test for greet() yet; one calling `greet('Ada')` would have caught this.",
        ].join('\n'),
      ),
  ]);
}

/** The fix reads, edits, writes a test, runs it, and reports what the test printed. */
function fixRules(bug: string): Rule[] {
  return byTurn('fix', FIX_TASK, [
    (req) => ({
      text: 'First, greet() as it is now.',
      tools: [{ name: 'Read', input: { file_path: inWorkdir(req, 'src/greet.js') } }],
    }),
    (req) =>
      tool('Edit', {
        file_path: inWorkdir(req, 'src/greet.js'),
        old_string: BUGGY_LINE,
        new_string: FIXED_LINE,
      }),
    (req) => tool('Write', { file_path: inWorkdir(req, 'test/greet.test.js'), content: NEW_TEST }),
    () => bash('node test/greet.test.js'),
    (req) => {
      const run = req.toolResults[0];
      const output = (run?.content ?? '').trim();
      if (!run || run.isError || !output.includes('ok - ')) {
        return text(`The new test fails:\n\n\`\`\`\n${output}\n\`\`\`\n\nThe fix is not done.`);
      }
      return text(
        [
          `Fixed: \`greet()\` now takes the name itself (\`${FIXED_LINE}\`, ${bug}) instead of`,
          'destructuring a `{ name }` object that no caller passes, so `node src/cli.js Ada` prints',
          '"Hello, Ada!".',
          '',
          "Added `test/greet.test.js` (greet('Ada') and greet('world')). Verified with",
          '`node test/greet.test.js`:',
          '',
          '```',
          output,
          '```',
        ].join('\n'),
      );
    },
  ]);
}
