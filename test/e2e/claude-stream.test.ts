import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  EMPTY_SUMMARY,
  LineSplitter,
  parseStreamLine,
  type StreamEvent,
  summarize,
} from '../../src/claude/stream.js';
import { runScenario, SCENARIOS } from '../fixtures/stream/scenarios.js';
import { expectNoProcessesLeft, killTagged, newTestTag } from '../helpers/processes.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/stream');

/** What a line is, without the values that change from run to run (ids, paths, timings). */
const shape = (e: StreamEvent) => {
  switch (e.kind) {
    case 'hook':
      return `hook:${e.phase}:${e.event}:${e.outcome ?? ''}`;
    case 'tool_use':
      return `tool_use:${e.name}`;
    case 'tool_result':
      return `tool_result:${e.isError}`;
    case 'result':
      return `result:${e.subtype}:${e.isError}:${e.terminalReason}:${e.permissionDenials.length}`;
    case 'other':
      return `other:${e.type}`;
    default:
      return e.kind;
  }
};

// The parser against live output, and the saved fixtures against what claude prints today: when
// a new Claude Code changes the stream, this fails and record.ts refreshes the fixtures.
describe('stream-json from the real Claude Code', () => {
  const tag = newTestTag();
  afterAll(() => killTagged(tag));

  it.each(SCENARIOS.map((s) => [s.name, s] as const))(
    '%s parses like its fixture',
    async (_name, scenario) => {
      const result = await runScenario(scenario, { AGENTBOX_TEST_TAG: tag });
      expect(result.code, result.stderr).toBe(scenario.name === 'api-error' ? 1 : 0);

      // Chunks of 7 bytes: lines and multi-byte characters are cut at random places.
      const bytes = Buffer.from(result.stdout, 'utf8');
      const splitter = new LineSplitter();
      const lines: string[] = [];
      for (let i = 0; i < bytes.length; i += 7) lines.push(...splitter.push(bytes.subarray(i, i + 7)));
      lines.push(...splitter.flush());
      expect(lines).toHaveLength(result.events.length);
      const live = lines.flatMap(parseStreamLine);

      const saved = fs
        .readFileSync(path.join(FIXTURES, `${scenario.name}.jsonl`), 'utf8')
        .split('\n')
        .flatMap(parseStreamLine);
      expect(live.map(shape)).toEqual(saved.map(shape));

      const summary = live.reduce(summarize, EMPTY_SUMMARY);
      expect(summary.sessionId).toBe(result.events[0]?.session_id ?? result.events.at(-1)?.session_id);
      expect(summary.result?.result).toBe(result.events.at(-1)?.result);
      await expectNoProcessesLeft(tag);
    },
  );
});
