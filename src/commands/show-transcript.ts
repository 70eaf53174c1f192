import type { CommandContext } from '../context.js';
import { gitPager, type LineSink, pagerSink } from '../git/pager.js';
import { openRun } from '../run/open.js';
import { START } from '../transcript/cursor.js';
import { liveTranscript } from '../transcript/live.js';
import { transcriptEntries } from '../transcript/read.js';
import { entryJson, entryPrinter } from '../transcript/render.js';
import { styler } from '../util/style.js';

export interface TranscriptOptions {
  readonly json?: boolean;
  /** false: `--no-pager`. */
  readonly pager?: boolean;
}

/**
 * `agentbox show <run> --transcript`: what the agent said and did, one line per entry, through the
 * person's pager in a terminal (as `agentbox diff`), plain when piped; `--json`: one JSON entry
 * per line. Read and written one entry at a time: a 1 GB stream prints in constant memory.
 */
export async function showTranscript(
  ctx: CommandContext,
  ref: string,
  opts: TranscriptOptions,
): Promise<number> {
  const { root, run } = await openRun(ctx.cwd, ref, ctx.env);
  const pager = ctx.io.isTTY && opts.pager !== false && !opts.json ? await gitPager(root, ctx.env) : null;
  const sink: LineSink = pager ? pagerSink(pager, ctx.env) : direct(ctx);
  const marks = styler(ctx.io);
  const width = ctx.io.isTTY && !pager ? (ctx.io.columns ?? 100) : Number.POSITIVE_INFINITY;
  const print = entryPrinter(width, marks);
  let count = 0;
  try {
    for (const { entry } of transcriptEntries(run.dir, START, liveTranscript(run, ctx.env))) {
      count++;
      const text = opts.json ? entryJson(entry) : print(entry);
      if (!(await sink.write(`${text}\n`))) break;
    }
    if (count === 0 && !opts.json)
      await sink.write(
        `${marks.dim(`(${run.name} has no transcript yet: nothing in raw/stream.jsonl or events.jsonl)`)}\n`,
      );
  } finally {
    await sink.close();
  }
  return 0;
}

/**
 * Straight to the command's output: a pipe or a file is written synchronously, anything else is
 * awaited when backed up (constant memory either way).
 */
function direct(ctx: CommandContext): LineSink {
  return {
    write: async (text) => {
      ctx.io.out(text);
      const backedUp = ctx.io.drained?.();
      if (backedUp) await backedUp;
      return true;
    },
    close: async () => {},
  };
}
