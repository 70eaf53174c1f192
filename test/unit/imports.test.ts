import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SRC, sources } from '../helpers/sources.js';

/**
 * The house (issue 16): imports run one way — `src/cli/` (the argument parser and the process's
 * entry) may import everything, nothing imports it — and there are no import circles between
 * modules (static `import … from`, `import type`, and dynamic `import()` alike: a type import is
 * erased from the build, but a reader still has to hold both files in mind at once — issue 28).
 */

/** The modules of src/ a file imports, type imports included, relative to src/ (`run/start.ts`). Pure. */
function importsOf(rel: string, text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const specs = [
    ...code.matchAll(/^\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]/gm),
    ...code.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((m) => m[1]!);
  return specs
    .filter((s) => s.startsWith('.'))
    .map((s) => path.posix.normalize(path.posix.join(path.posix.dirname(rel), s)).replace(/\.js$/, '.ts'));
}

/** Every circle in a graph (Tarjan's strongly connected components larger than one, or a self-loop). */
function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return out;
}

/**
 * The rooms (issue 28, docs/internals.md): the human gate (gate/) may import a run and what a person
 * sees; a run (run/, run/begin/, run/end/) may import what a person sees but never the gate; what a
 * person sees (present/) formats what it is given and imports neither.
 */
const ROOMS: readonly (readonly [from: string, never: readonly string[]])[] = [
  ['present/', ['run/', 'gate/', 'group/']],
  ['run/', ['gate/', 'group/']],
  // A group (issue 31) is made of runs: it calls into run/, never the other way.
  ['ledger/', ['group/', 'run/', 'gate/']],
];

/** Each import that goes against a room's rule, as `from → to`. Pure. */
function againstRooms(g: ReadonlyMap<string, readonly string[]>, rooms: typeof ROOMS): string[] {
  return [...g].flatMap(([from, to]) =>
    rooms
      .filter(([room]) => from.startsWith(room))
      .flatMap(([, never]) =>
        to.filter((t) => never.some((n) => t.startsWith(n))).map((t) => `${from} → ${t}`),
      ),
  );
}

const graph = new Map(
  sources(SRC).map((file) => {
    const rel = path.relative(SRC, file).split(path.sep).join('/');
    return [rel, importsOf(rel, fs.readFileSync(file, 'utf8'))] as const;
  }),
);

describe('imports (issue 16)', () => {
  it('nothing outside src/cli/ imports it', () => {
    const upward = [...graph].flatMap(([from, to]) =>
      from.startsWith('cli/') ? [] : to.filter((t) => t.startsWith('cli/')).map((t) => `${from} → ${t}`),
    );
    expect(upward).toEqual([]);
  });

  it('only the front end (src/cli/) loads a command: the domain and the web UI call domain functions', () => {
    const into = [...graph].flatMap(([from, to]) =>
      from.startsWith('cli/') || from.startsWith('commands/')
        ? []
        : to.filter((t) => t.startsWith('commands/')).map((t) => `${from} → ${t}`),
    );
    expect(into).toEqual([]);
  });

  it("every command in the CLI's table is src/commands/<name>.ts, loaded lazily", () => {
    const table = ['cli/table.ts', 'cli/table-remote.ts', 'cli/table-runs.ts']
      .map((file) => fs.readFileSync(path.join(SRC, file), 'utf8'))
      .join('\n');
    const loaded = [...table.matchAll(/import\(\s*'([^']+)'\s*\)/g)].map((m) => m[1]!);
    expect(loaded.filter((spec) => !/^\.\.\/commands\/[a-z0-9-]+\.js$/.test(spec))).toEqual([]);
    // Top-level commands only: a subcommand (`templates show`, `k8s job`) lives in its parent's module.
    const names = [
      ...[...table.matchAll(/program\s*\.command\('([^']+)'/g)].map((m) => m[1]!.replace(/^__/, '')),
      ...[...table.matchAll(/^\s+(\w+): async \(\) => \(await import/gm)].map((m) => m[1]!),
    ];
    expect(names.length).toBeGreaterThan(20);
    expect(names.filter((name) => !graph.has(`commands/${name}.ts`))).toEqual([]);
  });

  it('the rooms import one way: gate → run → present (issue 28)', () => {
    expect(againstRooms(graph, ROOMS)).toEqual([]);
  });

  it('no import circles', () => {
    expect(circles(graph)).toEqual([]);
  });

  it('the checks can fail', () => {
    expect(
      importsOf('run/x.ts', "import { a } from '../cli/context.js';\nconst m = await import('./y.js');"),
    ).toEqual(['cli/context.ts', 'run/y.ts']);
    expect(importsOf('run/x.ts', "import type { A } from '../cli/context.js';")).toEqual(['cli/context.ts']);
    expect(importsOf('run/x.ts', "export type { A } from './y.js';")).toEqual(['run/y.ts']);
    const loop = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(circles(loop)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
    expect(circles(new Map([['a.ts', ['a.ts']]]))).toEqual([['a.ts']]);
    const rooms = new Map([
      ['present/print.ts', ['run/end/finalize.ts', 'util/style.ts']],
      ['run/begin/prepare.ts', ['gate/stop.ts', 'present/live.ts']],
      ['gate/merge.ts', ['ledger/events.ts', 'present/result-message.ts']],
    ]);
    expect(againstRooms(rooms, ROOMS)).toEqual([
      'present/print.ts → run/end/finalize.ts',
      'run/begin/prepare.ts → gate/stop.ts',
    ]);
  });
});
