/**
 * Where agentbox's own part of a run's time goes (issue 37: "find where the time goes"), measured
 * from inside each timed agentbox process by a preload the bench gives node (`-r`): node's own
 * start (until the preload runs), agentbox until it spawns claude, claude from spawn to exit, and
 * agentbox after claude exited; and the process's CPU. Nothing of it is in agentbox itself.
 */
import fs from 'node:fs';
import path from 'node:path';
import { median } from './process-time.js';

/** One agentbox process's marks, in ms since node started it (performance.now()). */
export interface OwnPart {
  /** node's own start: when the preload ran. */
  readonly boot: number;
  /** When agentbox spawned claude (the first spawn of `claudeBin`). */
  readonly spawned: number;
  /** When claude exited, as agentbox's child process saw it. */
  readonly exited: number;
  /** When the process's 'exit' came. */
  readonly end: number;
  /** The process's own CPU (user + system), ms. */
  readonly cpu: number;
}

/**
 * Writes the preload into `dir` and returns its path. Each process writes its marks to the file
 * named by BENCH_OWN_FILE as it exits; `claudeBin` is the claude it waits for.
 */
export function ownPartPreload(dir: string, claudeBin: string): string {
  const file = path.join(dir, 'own-part.cjs');
  fs.writeFileSync(
    file,
    `'use strict';
const { performance } = require('node:perf_hooks');
const cp = require('node:child_process');
const marks = { boot: performance.now() };
const spawn = cp.spawn;
cp.spawn = function (command, ...rest) {
  const child = spawn.call(this, command, ...rest);
  if (command === ${JSON.stringify(claudeBin)} && marks.spawned === undefined) {
    marks.spawned = performance.now();
    child.once('exit', () => { marks.exited = performance.now(); });
  }
  return child;
};
process.once('exit', () => {
  const u = process.cpuUsage();
  marks.cpu = (u.user + u.system) / 1000;
  marks.end = performance.now();
  require('node:fs').writeFileSync(process.env.BENCH_OWN_FILE, JSON.stringify(marks));
});
`,
  );
  return file;
}

/** The marks the last process wrote to `file`. */
export function readOwnPart(file: string): OwnPart {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as OwnPart;
}

/** One line: the medians of each part over `parts`. */
export function ownPartLine(parts: readonly OwnPart[]): string {
  const m = (f: (p: OwnPart) => number) => Math.round(median(parts.map(f)));
  // A client of the resident agentbox spawns no claude: its own start and CPU are all there is.
  if (parts.every((p) => p.spawned === undefined))
    return `node's start ${m((p) => p.boot)} ms, the client's CPU ${m((p) => p.cpu)} ms (the run itself in the resident process)`;
  return [
    `node's start ${m((p) => p.boot)} ms`,
    `agentbox until claude starts ${m((p) => p.spawned - p.boot)} ms`,
    `claude ${m((p) => p.exited - p.spawned)} ms`,
    `agentbox after claude exits ${m((p) => p.end - p.exited)} ms`,
    `agentbox's CPU ${m((p) => p.cpu)} ms`,
  ].join(', ');
}
