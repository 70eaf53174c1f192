import { RULES, type Rule } from './rules.js';
import type { Config, ConfigFile } from './schema.js';

/** A repository's value that would loosen the person's setting of `key`. */
export interface Loosening {
  readonly key: string;
  readonly value: unknown;
  /** The person's value it would replace (theirs, or the default where they set none). */
  readonly yours: unknown;
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** Whether `repo` would loosen `person` under `rule` (`config`: the person's, for limits that depend on another key). Pure. */
export function loosens(rule: Rule, person: unknown, repo: unknown, config: Config): boolean {
  if (same(person, repo)) return false;
  switch (rule.kind) {
    case 'union':
    case 'free':
    case 'yours':
      return false;
    case 'trust':
      return true;
    case 'allow': {
      const yours = new Set(person as readonly string[]);
      return (repo as readonly string[]).some((entry) => !yours.has(entry));
    }
    case 'limit': {
      const [p, r] = [rule.measure(person, config), rule.measure(repo, config)];
      return r > p;
    }
    case 'order':
      return rule.strictest.indexOf(String(repo)) > rule.strictest.indexOf(String(person));
  }
}

/** Every key the file sets, in the table's order, with its rule and the person's value. */
function* setKeys(person: Config, file: ConfigFile | undefined) {
  if (!file) return;
  for (const [section, rules] of Object.entries(RULES) as [string, Record<string, Rule>][]) {
    const values = (file as Record<string, Record<string, unknown> | null | undefined>)[section];
    for (const [name, rule] of Object.entries(rules)) {
      const value = values?.[name];
      if (value === null || value === undefined) continue;
      const yours = (person as unknown as Record<string, Record<string, unknown>>)[section]![name];
      yield { section, name, rule, value, yours };
    }
  }
}

/** The repository file's values that would loosen the person's settings: its trust keys. Pure. */
export function loosenings(person: Config, file: ConfigFile | undefined): Loosening[] {
  const out: Loosening[] = [];
  for (const { section, name, rule, value, yours } of setKeys(person, file))
    if (loosens(rule, yours, value, person)) out.push({ key: `${section}.${name}`, value, yours });
  return out;
}

/**
 * The configuration in effect: the person's, with the repository's file over it key by key as
 * the table says. Untrusted, a value that would loosen the person's is left out; trusted, it is
 * used as written. Denials are joined either way: a repository never takes one of yours back. Pure.
 */
export function applyProject(person: Config, file: ConfigFile | undefined, trusted: boolean): Config {
  const out = Object.fromEntries(
    Object.entries(person).map(([section, values]) => [section, { ...values }]),
  ) as Record<string, Record<string, unknown>>;
  for (const { section, name, rule, value, yours } of setKeys(person, file)) {
    if (rule.kind === 'yours') continue;
    if (rule.kind === 'union')
      out[section]![name] = [...new Set([...(yours as string[]), ...(value as string[])])];
    else if (trusted || !loosens(rule, yours, value, person)) out[section]![name] = value;
  }
  return out as unknown as Config;
}

const code = (value: string) => `\`${value}\``;

/** What a repository's value does under `rule`, in words. */
function effect(rule: Rule): string {
  switch (rule.kind) {
    case 'union':
      return 'added to yours; never needs trust, never removes one of yours';
    case 'allow':
      return 'applies when every entry is in yours; an entry beyond yours needs trust';
    case 'limit':
      return 'applies when no higher than yours; higher needs trust';
    case 'order':
      return `${rule.strictest.map(code).join(' < ')}: applies when no looser than yours; looser needs trust`;
    case 'trust':
      return 'needs trust unless it equals yours';
    case 'free':
      return 'applies; nothing to trust';
    case 'yours':
      return 'never used, trusted or not: only your own file sets it';
  }
}

/**
 * The config-precedence table, as docs/configuration.md and docs/security.md carry it (between
 * the markers; test/unit/config-rules.test.ts keeps them equal to this). Pure.
 */
export function precedenceTable(): string {
  const rows = Object.entries(RULES).flatMap(([section, rules]) =>
    Object.entries(rules as Record<string, Rule>).map(
      ([name, rule]) => `| ${code(`${section}.${name}`)} | ${effect(rule)} | ${rule.why} |`,
    ),
  );
  return ['| key | a repository’s value | what the key decides |', '| --- | --- | --- |', ...rows].join('\n');
}
