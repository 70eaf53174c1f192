import fs from 'node:fs';

/**
 * A run's raw/stream.jsonl of `calls` tool calls (shared by ui-transcript.bench.ts and ui.bench.ts):
 * stream-json as Claude Code writes it: a text and a call, then its result; every 50th refused.
 */
export function writeStream(file: string, calls: number): void {
  const fd = fs.openSync(file, 'w');
  try {
    for (let k = 0; k < calls; k++) {
      const at = new Date(Date.UTC(2026, 0, 1) + k * 1000).toISOString();
      const id = `toolu_${k}`;
      const refused = k % 50 === 49;
      const out = refused
        ? 'Permission to read .agents/INDEX.md has been denied.'
        : k % 10 === 0
          ? 'x'.repeat(20_000)
          : `line ${k}\n`.repeat(20);
      const lines = [
        {
          type: 'assistant',
          timestamp: at,
          message: {
            role: 'assistant',
            content: [
              { type: 'text', text: `Step ${k}: reading.` },
              { type: 'tool_use', id, name: 'Bash', input: { command: `cat src/file-${k}.ts` } },
            ],
          },
        },
        {
          type: 'user',
          timestamp: at,
          message: {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: id, content: out, is_error: refused }],
          },
          // How Claude Code 2.1.330 says a permission rule refused the call.
          ...(refused
            ? { tool_result_meta: [{ id, permission_decision: { decision: 'reject', source: 'config' } }] }
            : {}),
        },
      ];
      fs.writeSync(fd, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
    }
  } finally {
    fs.closeSync(fd);
  }
}
