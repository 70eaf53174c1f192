// NOTE: a namespace import, as in src/config/schema.ts (`{ z }` bundles every zod locale).
import * as z from 'zod';
import { fillVariables, type TemplateValues } from './compose.js';
import { findSection, type Section, sectionKey, splitSections } from './sections.js';

// Each schema here checks a file or two per command: zod's compiled fast path (code generated with
// `new Function` at a schema's first parse) costs more than it saves, ~4 ms of reading the
// configuration. Global to zod, and the same wherever it is set.
z.config({ jitless: true });

/**
 * The violation types a run reports. SUP-7's, but for `verify_failed`: the seed's
 * `skipped_validation` is what agentbox checks by running `runs.verify` itself, and what it finds
 * is that the verification failed, not that the agent skipped it. A template may still name
 * `skipped_validation`: it sets verify_failed's action (see toContract).
 */
export const VIOLATION_TYPES = [
  'missing_section',
  'bad_format',
  'verify_failed',
  'direct_execution',
] as const;
export type ViolationType = (typeof VIOLATION_TYPES)[number];
/** correct: the supervisor asks the agent to fix it (minor); fail: the run ends at once (major). */
export type ViolationAction = 'correct' | 'fail';

export interface Violation {
  readonly type: ViolationType;
  readonly detail: string;
}

/** An output template's front matter, checked on load (unknown keys are errors: a typo never does nothing). */
export const contractSchema = z
  .object({
    required_sections: z.array(z.string().min(1)).min(1),
    violations: z
      .object({
        missing_section: z.enum(['correct', 'fail']).optional(),
        bad_format: z.enum(['correct', 'fail']).optional(),
        verify_failed: z.enum(['correct', 'fail']).optional(),
        /** The seed's name of verify_failed, kept so that templates written for it mean what they say. */
        skipped_validation: z.enum(['correct', 'fail']).optional(),
        direct_execution: z.enum(['correct', 'fail']).optional(),
      })
      .strict()
      .refine((v) => !v.verify_failed || !v.skipped_validation || v.verify_failed === v.skipped_validation, {
        message:
          'verify_failed and skipped_validation name the same violation (a failing runs.verify) and disagree: keep verify_failed',
      })
      .optional(),
  })
  .strict();

export interface OutputContract {
  /** Heading titles the final answer must have, each non-empty, as the template names them. */
  readonly requiredSections: readonly string[];
  readonly actions: Readonly<Record<ViolationType, ViolationAction>>;
  /** The template's body: the shape shown to the agent and the skeleton of report.md. */
  readonly body: string;
}

/** Minor by default: corrected, up to supervisor.max_corrections times. */
export const DEFAULT_ACTIONS: Record<ViolationType, ViolationAction> = {
  missing_section: 'correct',
  bad_format: 'correct',
  verify_failed: 'correct',
  direct_execution: 'correct',
};

/** The contract of a parsed output template (front matter already validated with contractSchema). */
export function toContract(data: z.infer<typeof contractSchema>, body: string): OutputContract {
  const { skipped_validation, verify_failed, ...others } = data.violations ?? {};
  const verify = verify_failed ?? skipped_validation;
  return {
    requiredSections: data.required_sections.map((s) => s.replace(/^#+\s*/, '').trim()),
    actions: { ...DEFAULT_ACTIONS, ...others, ...(verify ? { verify_failed: verify } : {}) },
    body,
  };
}

/** What is wrong with a final answer, against the contract (SUP-7: missing_section, bad_format). */
export async function checkAnswer(contract: OutputContract, answer: string): Promise<Violation[]> {
  if (answer.trim() === '') return [{ type: 'bad_format', detail: 'the final answer is empty' }];
  const { sections } = await splitSections(answer);
  const out: Violation[] = [];
  for (const title of contract.requiredSections) {
    const section = findSection(sections, title);
    if (!section) out.push({ type: 'missing_section', detail: `## ${title}` });
    else if (section.body === '') out.push({ type: 'bad_format', detail: `## ${title} is empty` });
  }
  return out;
}

/** The supervisor's correction for the agent: precise, one line per problem, then what to do. */
export function correctionText(
  violations: readonly Violation[],
  requiredSections: readonly string[],
): string {
  const say: Record<ViolationType, (detail: string) => string> = {
    missing_section: (d) => `Your final answer lacks the section \`${d}\`; add it.`,
    bad_format: (d) => `Your final answer is not in the required format: ${d}.`,
    verify_failed: (d) =>
      `The project's verification failed: ${d}\nFix the cause and run it again yourself before you finish.`,
    direct_execution: (d) => `You tried something no run may do (${d}); it was refused. Do not try it again.`,
  };
  const lines = violations.map((v) => say[v.type](v.detail));
  const shape = requiredSections.map((s) => `## ${s}`).join(', ');
  return [
    'agentbox supervisor: your work is not done yet.',
    ...lines,
    ...(shape ? [`Then give your whole final answer again, with the sections ${shape}.`] : []),
  ].join('\n');
}

/**
 * report.md's answer part, rendered from the agent's final answer by the template (SUP-3): the
 * template's title (variables filled), the agent's text before its first heading, then the
 * template's sections in the template's order with the agent's content (a section it did not
 * give says so), then the agent's other sections in its order.
 */
export async function formatAnswer(
  contract: OutputContract,
  answer: string,
  values: TemplateValues,
): Promise<string> {
  const template = await splitSections(fillVariables(contract.body, values));
  const given = await splitSections(answer);
  const title = template.sections.find((s) => s.depth === 1);
  const skeleton = topSections(template.sections.filter((s) => s !== title));
  const depth = skeleton[0]?.depth ?? 2;
  const used = new Set<string>();
  const parts: string[] = [];
  if (title) parts.push(title.heading);
  if (given.preamble) parts.push(given.preamble);
  for (const s of skeleton) {
    used.add(sectionKey(s.title));
    const mine = findSection(given.sections, s.title);
    parts.push(`${'#'.repeat(depth)} ${s.title}`, mine?.body || '_(not given)_');
  }
  const extra = topSections(given.sections).filter((s) => !used.has(sectionKey(s.title)));
  for (const s of extra) parts.push(`${'#'.repeat(depth)} ${s.title}`, s.body || '_(empty)_');
  return `${parts.join('\n\n').trim()}\n`;
}

/** The shallowest sections (those not nested in another). */
function topSections(sections: readonly Section[]): Section[] {
  const min = Math.min(...sections.map((s) => s.depth));
  return sections.filter((s) => s.depth === min);
}
