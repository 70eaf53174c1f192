import fs from 'node:fs';
import path from 'node:path';
import type { CommandContext } from '../context.js';
import { claimOf } from '../gate/claims.js';
import { gateOf, type NotPassing } from '../gate/merge-gate.js';
import { patchSeen, patchSeenLine } from '../gate/patch-seen.js';
import { gateLines, type Trust } from '../gate/trust.js';
import { inspectPatchFile } from '../git/apply.js';
import { findRepo } from '../git/repo.js';
import type { Inspection } from '../git/sensitive.js';
import { findGroup } from '../group/resolve.js';
import { EventLog } from '../ledger/events.js';
import {
  fileSizes,
  openLedger,
  type RunDetails,
  type RunOutput,
  type RunSetup,
  type RunState,
  readRun,
  resolveRun,
  runIdOf,
} from '../ledger/index.js';
import type { OutsidePatch } from '../present/left-out.js';
import { nextAction } from '../present/next-step.js';
import { findingLines } from '../present/run-findings.js';
import { spendLines } from '../present/spend.js';
import { toolErrorsNote } from '../present/tool-errors.js';
import { type Refusal, refusalsOf, sandboxOffOf } from '../review/events.js';
import { outsidePatchOf } from '../run/end/left-out.js';
import { terminalJson } from '../util/json-out.js';
import { type Styler, styler } from '../util/style.js';
import { terminalLine, terminalName, terminalRecord, terminalText } from '../util/terminal-text.js';
import { colourStatus } from './status.js';

export { spendLine, spendLines } from '../present/spend.js';
export { refusalsOf, sandboxOffOf } from '../review/events.js';

export interface ShowOptions {
  readonly json?: boolean;
  /** What the agent said and did instead (src/commands/show-transcript.ts). */
  readonly transcript?: boolean;
  /** false: `--no-pager` (the transcript only). */
  readonly pager?: boolean;
}

export interface SizedFile {
  readonly path: string;
  readonly bytes: number;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** What is left to do with a run, in any state; null when nothing is. Pure. */
export function showNext(name: string, state: RunState | null, files: readonly string[]): string | null {
  if (!state) return `the run has no state.json — it is being created, or creating it failed`;
  const id = runIdOf(name);
  if (state.status === 'ACTIVE') return `it is still running — check again with: agentbox show ${id}`;
  if (state.status === 'DONE' && state.failure?.kind !== 'setup')
    return files.includes('report.md') ? `read the report: .agents/runs/${name}/report.md` : null;
  const setupLog = `.agents/runs/${name}/${state.setup?.log ?? 'raw/setup.log'}`;
  return nextAction(state.status, id, state.failure, setupLog, files.includes('changes.patch'));
}

/** One line of text from a run's files (the agent's, a publication's), safe for a terminal. */
const clean = terminalLine;

const list = (items: readonly string[]) => (items.length > 0 ? items.join(', ') : '(none)');

const NO_PATCH: Inspection = { sensitive: [], refused: [] };
const NO_EVENTS = { refusals: [], sandboxOff: null };

/** What the run was given: its model, tools and commands, and its sandbox if it had none. */
function envelopeFields(
  { meta, state }: RunDetails,
  field: (label: string, value: string) => void,
  style: Styler,
  sandboxOff: string | null,
): void {
  field('model', meta.model ?? '(default)');
  if (state?.model_used) field('model used', state.model_used);
  if (state?.claude_version) field('claude', `Claude Code ${state.claude_version}`);
  field('tools', list(meta.tools_allowlist));
  field('safe cmds', list(meta.safe_commands));
  field('human-only', list(meta.human_only_commands));
  if (sandboxOff) field('sandbox', style.warn(`off (${sandboxOff}): no kernel fence around its commands`));
}

/** runs.setup's outcome in one line. Pure. */
function setupLine(setup: RunSetup, style: Styler): string {
  const how = setup.ok
    ? 'passed'
    : style.bad(setup.timed_out ? 'timed out' : `FAILED (exit code ${setup.exit_code ?? '—'})`);
  return `${clean(setup.command)} — ${how} in ${(setup.duration_ms / 1000).toFixed(1)}s (${setup.log})`;
}

/** The output contract's verdict in one line. Pure. */
function outputLine(o: RunOutput): string {
  const how = o.template
    ? `template ${o.applied ? 'applied' : 'not applied'} (${o.template})`
    : 'raw answer (no template)';
  const verified = o.verified === null ? '' : ` · verification ${o.verified ? 'passed' : 'FAILED'}`;
  return `${how} · ${o.violations} violation(s), ${o.corrections} correction(s)${verified}`;
}

/** The fields only a run with a state.json has. */
function stateFields(state: RunState, field: (label: string, value: string) => void, style: Styler): void {
  field('ended', state.ended_at ?? '—');
  field('heartbeat', state.last_heartbeat ?? '—');
  // Only a running run has a pid worth showing: a finished run's would be stale (and reused).
  if (state.status === 'ACTIVE' || state.status === 'STALLED')
    field('pid', `${state.pid ?? '—'} (claude ${state.claude_pid ?? '—'})`);
  field('session', state.session_id ?? '—');
  const failed = toolErrorsNote({
    count: state.failed_tool_calls ?? 0,
    last: state.last_tool_error ? clean(state.last_tool_error) : null,
  });
  field('tool calls', `${state.tool_calls}${failed ? ` · ${style.warn(failed)}` : ''}`);
  if (state.setup) field('setup', setupLine(state.setup, style));
}

/** The run's artifacts with their sizes. An artifact's name is the agent's (.agentbox-run/ in its worktree): shown escaped. Pure. */
function fileLines(files: readonly SizedFile[], style: Styler): string[] {
  if (files.length === 0) return [style.dim('  (no artifacts yet)')];
  const names = files.map((f) => terminalName(f.path));
  const width = Math.max(0, ...names.map((n) => n.length));
  return files.map((f, i) => `  ${names[i]!.padEnd(width)}  ${formatBytes(f.bytes).padStart(9)}`);
}

/** Where a fetched run ran and who claims what it says; the verdicts; the patch against what was shown. */
function trustFields(
  { meta, state }: RunDetails,
  { claim, seen }: Trust,
  field: (label: string, value: string) => void,
  style: Styler,
): void {
  if (meta.origin) {
    const o = meta.origin;
    const published = o.run === meta.run_name ? '' : ` (published as ${clean(o.run)})`;
    field('ran on', `${clean(o.host)} — fetched from ${clean(o.remote)}${published}`);
  }
  if (claim) {
    const commit = claim.publication ? ` — publication ${claim.publication.slice(0, 12)}` : '';
    field('claimed by', `${clean(claim.by)}${commit}`);
  }
  if (state?.output) field('output', `${outputLine(state.output)}${claim ? ' (claimed)' : ''}`);
  if (seen) field('patch', patchSeenLine(seen, style));
}

/** A revised run's revision (agentbox revise) and where its own change is. Pure. */
const revisionText = (id: string, k: number, claimed: boolean) =>
  `${k}${claimed ? ' (claimed)' : ''} (each in revisions/<k>/; its own change: agentbox diff ${id} --revision ${k})`;

/** Every field one printable line (a fetched run's records are a stranger's); the task keeps its lines. Pure. */
const printable = (read: RunDetails): RunDetails => ({
  ...read,
  meta: { ...terminalRecord(read.meta), task: read.meta.task },
  state: read.state && terminalRecord(read.state),
});

/** The human view of `agentbox show`. Pure. */
export function renderRunDetails(
  read: RunDetails,
  files: readonly SizedFile[],
  root: string,
  style: Styler,
  inspection: Inspection = NO_PATCH,
  events: { readonly refusals: readonly Refusal[]; readonly sandboxOff: string | null } = NO_EVENTS,
  report: string | null = null,
  failed: NotPassing | null = null,
  outside: OutsidePatch = { nested: [], leftOut: null },
  trust: Trust = { claim: null, seen: null },
): string {
  const { refusals, sandboxOff } = events;
  const run = printable(read);
  const { meta, state } = run;
  const { claim } = trust;
  const lines: string[] = [style.bold(run.name), ...gateLines(trust, failed, style)];
  const field = (label: string, value: string) => lines.push(`  ${label.padEnd(12)}${value}`);
  const indentedTask = terminalText(meta.task).replace(/\n/g, `\n${' '.repeat(14)}`);
  field('id', meta.run_id);
  field('type', meta.type);
  const claimed = claim ? style.warn(' (claimed by its publication, not checked here)') : '';
  field(
    'status',
    state ? `${colourStatus(state.status, style)(state.status)}${claimed}` : style.dim('(no state.json)'),
  );
  field('task', indentedTask);
  if (state?.revision) field('revision', revisionText(meta.run_id, state.revision.number, claim !== null));
  field('created', meta.created_at);
  if (meta.rerun_of) field('rerun of', `${meta.rerun_of} (agentbox show ${runIdOf(meta.rerun_of)})`);
  if (state) stateFields(state, field, style);
  envelopeFields(run, field, style, sandboxOff);
  const drift = state && state.config_hash !== meta.config_hash;
  field('config', `${meta.config_hash}${drift ? style.warn(` (state.json says ${state.config_hash})`) : ''}`);
  field('repo start', meta.repo_sha_start ?? '—');
  trustFields(run, trust, field, style);
  const maxCost = meta.options?.max_cost_usd;
  const spend = claim ? `spend ${style.warn('(claimed by its publication, not checked here)')}` : 'spend';
  lines.push('', spend, ...spendLines(state?.usage, typeof maxCost === 'number' ? maxCost : null));
  if (state?.failure) {
    const f = state.failure;
    lines.push('', style.bad('failure'));
    field('kind', f.kind);
    field('message', clean(f.message));
    if (f.last_safe_artifact) field('last safe', f.last_safe_artifact);
  }
  lines.push('', 'files', ...fileLines(files, style));
  lines.push(...findingLines(style, inspection, refusals, report, outside, state?.status ?? null));
  lines.push('', 'paths');
  field('run folder', run.dir);
  if (state?.worktree_path) field('worktree', path.resolve(root, state.worktree_path));
  if (state?.branch) field('branch', state.branch);
  if (state?.result_commit)
    field('commit', `${state.result_commit.slice(0, 12)} (the result on ${state.branch ?? 'its branch'})`);
  const next = showNext(run.name, state, run.files);
  if (next) lines.push('', `next: ${next}`);
  return `${lines.join('\n')}\n`;
}

/** `agentbox show <run>`: everything about one run; `show <group>`: the group ranked. Reads only. */
export async function show(ctx: CommandContext, runRef: string, opts: ShowOptions = {}): Promise<number> {
  if (opts.transcript) return (await import('./show-transcript.js')).showTranscript(ctx, runRef, opts);
  const repo = await findRepo(ctx.cwd, ctx.env);
  const ledger = openLedger(repo.root);
  const group = findGroup(ledger, runRef);
  if (group) return (await import('./show-group.js')).showGroup(ctx, ledger, group, opts.json === true);
  const run = readRun(ledger, resolveRun(ledger, runRef));
  const files = fileSizes(run.dir, run.files);
  const { sensitive, refused } = run.files.includes('changes.patch')
    ? await inspectPatchFile(repo.root, path.join(run.dir, 'changes.patch'))
    : NO_PATCH;
  const events = new EventLog(run.dir).read();
  const refusals = refusalsOf(events);
  const sandboxOff = sandboxOffOf(events);
  const outside = outsidePatchOf(events);
  const gate = gateOf(run, events);
  const claim = claimOf(run, events);
  const seen = run.meta.type === 'fix' ? patchSeen(run.dir) : null;
  const report = run.files.includes('report.md')
    ? fs.readFileSync(path.join(run.dir, 'report.md'), 'utf8')
    : null;
  if (opts.json) {
    const { name, dir, meta, state } = run;
    ctx.io.out(
      `${terminalJson({ name, dir, meta, state, claim, patch: seen, not_passing: gate, files, sensitive, refused, refusals, nested: outside.nested, left_out: outside.leftOut, sandbox_off: sandboxOff, report }, 2)}\n`,
    );
    return 0;
  }
  ctx.io.out(
    renderRunDetails(
      run,
      files,
      repo.root,
      styler(ctx.io),
      { sensitive, refused },
      { refusals, sandboxOff },
      report,
      gate,
      outside,
      { claim, seen },
    ),
  );
  return 0;
}
