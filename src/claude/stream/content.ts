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
 * (EROFS; node spells it in lower case), a forbidden operation (EPERM, e.g. a unix socket), a host
 * not allowed (its proxy's answer). Only for the log: the kernel already refused.
 * NOTE: the words alone are not a refusal: a command that printed a file saying "Operation not
 * permitted" and then failed for another reason refused nothing. So the words must stand where a
 * program reports its own error: after `name: ` (`touch: cannot touch 'x': Read-only file system`),
 * after `[Errno 30] `, as an errno code (`EROFS:`), or as the proxy's whole line.
 */
const SANDBOX_REFUSAL =
  /(?:: |\[Errno \d+\] )(?:read-only file system|operation not permitted)|\b(?:EROFS|EPERM)\b[:,']|^connection blocked by network allowlist$/im;
/**
 * agentbox's human gate refusing to run inside the run (src/gate/gate.ts). It logs itself where it
 * can; from inside a sandbox it cannot, and the stream is the record.
 */
const GATE_REFUSAL = 'is the human gate and does not run inside';
/**
 * Claude Code's own report of what its sandbox denied, also when the command exited 0: a block it
 * appends at the very end of the output. The tag anywhere else is text the command printed (a
 * transcript, a source file), not a refusal.
 */
const SANDBOX_VIOLATIONS = /\n<sandbox_violations>\n([^<]*)<\/sandbox_violations>\s*$/;

/**
 * What the sandbox refused, from a refused command's output: Claude Code's violations note (`deny
 * network-outbound registry.npmjs.org:443`) or the line naming the error. The output's first line
 * (`> kebab@1.0.0 test`, for npm's update check) would say nothing about it.
 */
export function sandboxRefusalReason(text: string): string {
  const note = SANDBOX_VIOLATIONS.exec(text)?.[1]?.trim();
  if (note) return note.split('\n').join('; ');
  return text.split('\n').find((line) => SANDBOX_REFUSAL.test(line)) ?? text;
}

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
            : SANDBOX_VIOLATIONS.test(text) || (result.isError && SANDBOX_REFUSAL.test(text))
              ? 'sandbox'
              : undefined);
      if (by) result.refusedBy = by;
      events.push(result);
    }
  }
  return events;
}
