/** The tour itself: the commands the demo shows, in order, each checked. */
import { BUGGY_LINE, FIX_TASK, FIXED_LINE, lineOf, SCOUT_QUESTION } from './project.js';
import { agentbox, type Context, cat, checkConversation, DemoFailure, git, runName, step } from './steps.js';

export async function demo(ctx: Context): Promise<void> {
  // The project as a developer has it (committed before the demo starts), with a bug that shows.
  await step(ctx, 'node src/cli.js Ada', process.execPath, ['src/cli.js', 'Ada']);

  await agentbox(ctx, ['init']);
  await git(ctx, ['add', '-A']);
  await git(ctx, ['commit', '--quiet', '-m', 'set up agentbox']);
  await agentbox(ctx, ['doctor']);

  let since = ctx.server.requests.length;
  const scout = await agentbox(ctx, ['scout', SCOUT_QUESTION]);
  checkConversation(ctx, since, 'the scout run');
  const scoutRun = runName(scout, 'agentbox scout');
  const report = cat(ctx, `.agents/runs/${scoutRun}/report.md`);
  if (!report.includes(`src/greet.js:${lineOf('src/greet.js', BUGGY_LINE)}`)) {
    throw new DemoFailure("the scout's report.md does not hold the model's answer");
  }

  since = ctx.server.requests.length;
  const fix = await agentbox(ctx, ['fix', FIX_TASK]);
  checkConversation(ctx, since, 'the fix run');
  const fixRun = runName(fix, 'agentbox fix');
  const patch = cat(ctx, `.agents/runs/${fixRun}/changes.patch`);
  if (!patch.includes(`+${FIXED_LINE}`) || !patch.includes('test/greet.test.js')) {
    throw new DemoFailure('changes.patch does not hold the fix and the new test');
  }

  const merged = await agentbox(ctx, ['merge', fixRun, '--yes']);
  if (!/\bmerged\b/.test(merged)) throw new DemoFailure('agentbox merge did not say it merged');
  await git(ctx, ['status', '--short', '--untracked-files=all']);
  await step(ctx, 'node test/greet.test.js', process.execPath, ['test/greet.test.js']);
  await step(ctx, 'node src/cli.js Ada', process.execPath, ['src/cli.js', 'Ada']);
  await agentbox(ctx, ['status']);
}
