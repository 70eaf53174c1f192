import fs from 'node:fs';
import path from 'node:path';
import { AgentboxError } from '../../errors.js';
import type { Env } from '../../util/env.js';
import { type LineComment, parseCommentArgs, type Review } from './comments.js';
import { editFile } from './editor.js';
import { parseHunks } from './hunks.js';
import { renderReview } from './render.js';
import { parseReviewFile, writeReviewFile } from './review-file.js';

/** Where `--edit` keeps the review file (like git's COMMIT_EDITMSG): an aborted review is not lost. */
export const REVIEW_FILE = 'REVIEW_EDITMSG';

export interface ReviewInput {
  readonly runDir: string;
  readonly runName: string;
  readonly revision: number;
  /** The feedback as typed (the positional argument). */
  readonly feedback?: string | undefined;
  /** `--comment` values, in order: place, text, place, text… */
  readonly comments?: readonly string[] | undefined;
  /** `--edit`: the review is written in the person's editor, on the change. */
  readonly edit?: boolean | undefined;
}

/**
 * The person's review from the command line and, with `--edit`, their editor; and `{{review}}`
 * rendered from it (each comment with the hunk of the run's whole change it is on). An empty
 * review is a usage error: nothing is sent.
 */
export async function collectReview(
  env: Env,
  input: ReviewInput,
): Promise<{ review: Review; rendered: string }> {
  const patch = readPatch(input.runDir);
  let review: Review = {
    message: input.feedback?.trim() ?? '',
    comments: parseCommentArgs(input.comments ?? []),
  };
  if (input.edit) {
    const file = path.join(input.runDir, REVIEW_FILE);
    const initial = writeReviewFile({
      run: input.runName,
      revision: input.revision,
      message: review.message,
      patch,
    });
    const edited = parseReviewFile(await editFile(env, file, initial), file);
    review = { message: edited.message, comments: [...edited.comments, ...review.comments] };
  }
  checkReview(review, input);
  return { review, rendered: renderReview(review, parseHunks(patch)) };
}

function readPatch(runDir: string): string {
  try {
    return fs.readFileSync(path.join(runDir, 'changes.patch'), 'utf8');
  } catch {
    return '';
  }
}

function checkReview(review: Review, input: ReviewInput): void {
  const id = input.runName.slice(-6);
  if (review.message === '' && review.comments.length === 0) {
    throw new AgentboxError(
      'USAGE',
      `the review is empty${input.edit ? ' (the file was left empty)' : ''}: nothing was sent`,
      {
        hint: `say what to change, e.g. agentbox revise ${id} "rename x to count", or --comment <file>:<line> "<text>", or --edit`,
      },
    );
  }
  const all = [review.message, ...review.comments.map((c: LineComment) => c.text)];
  if (all.some((t) => t.includes('\0'))) {
    throw new AgentboxError('USAGE', 'the review contains a NUL byte', { hint: 'remove it' });
  }
}
