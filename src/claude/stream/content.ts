import type { StreamEvent } from './events.js';
import { isObject, str } from './fields.js';

/** A tool_result's content is a string or a list of blocks; only text blocks carry words. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter(
      (b): b is Record<string, unknown> => isObject(b) && b.type === 'text' && typeof b.text === 'string',
    )
    .map((b) => b.text as string)
    .join('\n');
}

/** Who refused each tool call, from a user line's `tool_result_meta` (measured on 2.1.330). */
function refusals(meta: unknown): Map<string, 'config' | 'hook' | 'other'> {
  const out = new Map<string, 'config' | 'hook' | 'other'>();
  if (!Array.isArray(meta)) return out;
  for (const entry of meta) {
    if (!isObject(entry) || !isObject(entry.permission_decision)) continue;
    if (entry.permission_decision.decision !== 'reject') continue;
    const source = entry.permission_decision.source;
    out.set(str(entry.id) ?? '', source === 'config' || source === 'hook' ? source : 'other');
  }
  return out;
}

const SKILL_REFUSAL = 'cannot be used with Skill tool due to disable-model-invocation';
/**
 * A failed command the sandbox stopped (measured on 2.1.330): a write outside the writable paths
 * (EROFS; node spells it in lower case), a forbidden operation (EPERM, e.g. a unix socket), a host not allowed (its proxy's
 * answer), and the note Claude Code appends about sandbox violations. Only for the log: the kernel
 * already refused.
 */
const SANDBOX_REFUSAL =
  /read-only file system|operation not permitted|\bEROFS\b|\bEPERM\b|connection blocked by network allowlist/i;
/**
 * agentbox's human gate refusing to run inside the run (src/run/gate.ts). It logs itself where it
 * can; from inside a sandbox it cannot, and the stream is the record.
 */
const GATE_REFUSAL = 'is the human gate and does not run inside';
/** Claude Code's own report of what its sandbox denied, also when the command exited 0. */
const SANDBOX_VIOLATIONS = '<sandbox_violations>';

/** Assistant lines carry text and tool_use blocks, user lines tool_result blocks. */
export function contentEvents(type: 'assistant' | 'user', message: unknown, meta?: unknown): StreamEvent[] {
  const refused = refusals(meta);
  const content = isObject(message) ? message.content : undefined;
  if (!Array.isArray(content)) return [];
  const events: StreamEvent[] = [];
  for (const block of content) {
    if (!isObject(block)) continue;
    if (type === 'assistant' && block.type === 'text' && typeof block.text === 'string') {
      events.push({ kind: 'text', text: block.text });
    } else if (type === 'assistant' && block.type === 'tool_use') {
      events.push({
        kind: 'tool_use',
        id: str(block.id) ?? '',
        name: str(block.name) ?? '',
        input: block.input,
      });
    } else if (type === 'user' && block.type === 'tool_result') {
      const toolUseId = str(block.tool_use_id) ?? '';
      const text = contentText(block.content);
      const result: StreamEvent = { kind: 'tool_result', toolUseId, isError: block.is_error === true, text };
      const by =
        refused.get(toolUseId) ??
        (result.isError && text.includes(SKILL_REFUSAL)
          ? 'skill'
          : result.isError && text.includes(GATE_REFUSAL)
            ? 'gate'
            : text.includes(SANDBOX_VIOLATIONS) || (result.isError && SANDBOX_REFUSAL.test(text))
              ? 'sandbox'
              : undefined);
      if (by) result.refusedBy = by;
      events.push(result);
    }
  }
  return events;
}
