import fs from 'node:fs';
import path from 'node:path';
import { AgentboxError } from '../../errors.js';
import type { Env } from '../../util/env.js';
import { readTextIfExists } from '../../util/fs.js';
import { type LineComment, parseCommentArgs, type Review } from './comments.js';
import { editFile } from './editor.js';
import { parseHunks } from './hunks.js';
import { checkPlaces } from './places.js';
import { renderReview } from './render.js';
import { parseReviewFile, reopenedReview, writeReviewFile } from './review-file.js';

/**
 * Where `--edit` keeps the review file (like git's COMMIT_EDITMSG): a review that was not sent is
 * opened again by the next `--edit` of the same revision, and removed once one is sent.
 */
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
  /** The run's worktree: a comment on a line the change left alone names a line of its file. */
  readonly worktree?: string | null;
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
    const fresh = writeReviewFile({
      run: input.runName,
      revision: input.revision,
      message: review.message,
      patch,
    });
    const edited = parseReviewFile(
      await editFile(env, file, keptOr(file, fresh, review.message)),
      file,
      patch,
    );
    review = { message: edited.message, comments: [...edited.comments, ...review.comments] };
  }
  checkReview(review, input);
  const hunks = parseHunks(patch);
  checkPlaces(review.comments, hunks, input.worktree ?? null, input.runName.slice(-6));
  return { review, rendered: renderReview(review, hunks) };
}

/**
 * What the editor opens: the review kept from an attempt that sent nothing, when it is about this
 * change ("run the same command again" reopens it, as written); else the fresh file, a kept one
 * about another change moved aside to REVIEW_EDITMSG.old first, not overwritten.
 */
function keptOr(file: string, fresh: string, message: string): string {
  const kept = readTextIfExists(file);
  if (kept === undefined) return fresh;
  const reopened = reopenedReview(kept, fresh, message);
  if (reopened !== null) return reopened;
  fs.renameSync(file, `${file}.old`);
  return fresh;
}

/** A review is sent (recorded with its revision): the file kept for it is done with. */
export function clearKeptReview(runDir: string): void {
  fs.rmSync(path.join(runDir, REVIEW_FILE), { force: true });
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
