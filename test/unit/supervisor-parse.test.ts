import { describe, expect, it } from 'vitest';
import { parseAnswer, type SupervisorAnswer } from '../../src/supervisor/parse.js';

const FENCE = '```';

describe('parseAnswer', () => {
  it.each<[string, string, SupervisorAnswer]>([
    // Plain markers.
    ['COMPLETE', '[COMPLETE] parser written', { action: 'complete', text: 'parser written' }],
    ['ABORT', '[ABORT] the repo is gone', { action: 'abort', text: 'the repo is gone' }],
    ['CONTINUE', '[CONTINUE] also add a test', { action: 'continue', text: 'also add a test' }],
    ['COMPLETE with no summary', '[COMPLETE]', { action: 'complete', text: '' }],
    ['ABORT with no reason', '[ABORT]', { action: 'abort', text: '' }],
    ['trailing whitespace', '[COMPLETE] done  \n\n', { action: 'complete', text: 'done' }],
    // Case.
    ['lower case', '[complete] done', { action: 'complete', text: 'done' }],
    ['mixed case', '[CoNtInUe] go on', { action: 'continue', text: 'go on' }],
    ['lower-case abort', '[abort] no', { action: 'abort', text: 'no' }],
    // Where the marker is.
    ['leading prose', 'Looks good to me. [COMPLETE] all done', { action: 'complete', text: 'all done' }],
    [
      'a marker on a later line',
      'I checked the diff.\nThe tests pass.\n[COMPLETE] parser and test written',
      { action: 'complete', text: 'parser and test written' },
    ],
    [
      'inside a fence',
      `${FENCE}\n[CONTINUE] also add a test\n${FENCE}`,
      { action: 'continue', text: 'also add a test' },
    ],
    [
      'inside a fence with a language',
      `Here is my answer:\n${FENCE}text\n[ABORT] it deleted the tests\n${FENCE}\n`,
      { action: 'abort', text: 'it deleted the tests' },
    ],
    // Decorations.
    ['bold', '**[COMPLETE]** all done', { action: 'complete', text: 'all done' }],
    ['bold, lower case', '**[continue]** more', { action: 'continue', text: 'more' }],
    ['a colon after the marker', '[COMPLETE]: all done', { action: 'complete', text: 'all done' }],
    ['a colon after a bold marker', '**[COMPLETE]:** all done', { action: 'complete', text: 'all done' }],
    ['a colon and no space', '[ABORT]:broken', { action: 'abort', text: 'broken' }],
    // CONTINUE text is verbatim.
    [
      'multi-line CONTINUE text',
      '[CONTINUE] Run the tests.\n\n  Then fix:\n    - the parser\n    - the "quoted" one',
      { action: 'continue', text: 'Run the tests.\n\n  Then fix:\n    - the parser\n    - the "quoted" one' },
    ],
    [
      'CONTINUE text on the lines after the marker',
      '[CONTINUE]\nfirst line\nsecond line',
      { action: 'continue', text: 'first line\nsecond line' },
    ],
    [
      'multi-line CONTINUE text in a fence',
      `${FENCE}\n[CONTINUE] step one\n\nstep two\n${FENCE}`,
      { action: 'continue', text: 'step one\n\nstep two' },
    ],
    [
      'a fence inside CONTINUE text: only the fence lines go',
      `[CONTINUE] Run this:\n\n${FENCE}bash\nnpm test\n${FENCE}\n\nthen report back`,
      { action: 'continue', text: 'Run this:\n\nnpm test\n\nthen report back' },
    ],
    [
      'an indented fence inside CONTINUE text',
      `[CONTINUE] see\n    ${FENCE}js\n    code()\n    ${FENCE}\nend`,
      { action: 'continue', text: 'see\n    code()\nend' },
    ],
    [
      'a fence with a language that has digits or symbols',
      `${FENCE}python3\n[CONTINUE] one\n${FENCE}c++\ntwo\n${FENCE}`,
      { action: 'continue', text: 'one\ntwo' },
    ],
    [
      'inline backticks are not a fence',
      `[CONTINUE] run ${FENCE}npm test${FENCE} now`,
      { action: 'continue', text: `run ${FENCE}npm test${FENCE} now` },
    ],
    ['CRLF line ends', '[CONTINUE] a\r\nb\r\n', { action: 'continue', text: 'a\r\nb' }],
    // The first marker wins; the text is everything after it.
    [
      'two markers',
      '[COMPLETE] done\n[CONTINUE] more',
      { action: 'complete', text: 'done\n[CONTINUE] more' },
    ],
    ['CONTINUE before ABORT', '[CONTINUE] fix it [ABORT]', { action: 'continue', text: 'fix it [ABORT]' }],
    // No decision.
    ['CONTINUE with no text', '[CONTINUE]', { action: 'none' }],
    ['CONTINUE with only whitespace', '[CONTINUE]  \n\t\n', { action: 'none' }],
    ['CONTINUE with only a colon', '[CONTINUE]:', { action: 'none' }],
    ['CONTINUE with only fences after it', `[CONTINUE]\n${FENCE}\n${FENCE}`, { action: 'none' }],
    ['the empty string', '', { action: 'none' }],
    ['whitespace only', '  \n\n ', { action: 'none' }],
    ['prose with no marker', 'I think the agent is done, it wrote the parser.', { action: 'none' }],
    ['a marker word without brackets', 'COMPLETE: the parser is written', { action: 'none' }],
    ['a marker word in prose', 'The task is complete; abort nothing, continue never.', { action: 'none' }],
    ['other brackets', '(COMPLETE) done {ABORT}', { action: 'none' }],
    ['an unknown marker', '[DONE] finished', { action: 'none' }],
  ])('%s', (_name, raw, expected) => {
    expect(parseAnswer(raw)).toEqual(expected);
  });
});
