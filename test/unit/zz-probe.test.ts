import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, it } from 'vitest';
import { createRun, updateState } from '../../src/ledger/index.js';
import { type Origin, origin } from '../helpers/remote.js';
import { machine } from '../helpers/remote-machine.js';
import { ENVELOPE } from './fixtures/ledger.js';

let world: Origin | undefined;
afterEach(() => { world?.cleanup(); world = undefined; });
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

it('probe names', async () => {
  world = origin({ 'src/app.ts': 'export const x = 0;\n' });
  const runner = machine(world, 'runner');
  const laptop = machine(world, 'laptop');
  const base = runner.repo.git('rev-parse', 'HEAD').trim();
  const run = await createRun(runner.ledger, { type: 'scout', task: 'names', envelope: ENVELOPE, repoShaStart: base, pid: process.pid, now: new Date('2026-03-01T10:00:00Z') });
  await updateState(runner.ledger, run, { status: 'DONE' });
  fs.mkdirSync(path.join(run.dir, 'artifacts'));
  fs.writeFileSync(path.join(run.dir, 'artifacts', 'x\u009b31m\u202eevil.txt'), 'hi');
  fs.writeFileSync(path.join(run.dir, 'x\u009b2J\u2066top.md'), 'hi');
  console.log(await runner.agentbox(['push', run.id]));
  console.log(await laptop.agentbox(['fetch']));
  for (const argv of [['show', run.id], ['status', '--all'], ['show', run.id, '--json']]) {
    const o = await laptop.agentbox(argv);
    const t = o.stdout + o.stderr;
    console.log(argv.join(' '), CONTROL.exec(t), JSON.stringify(t).slice(0, 1500));
  }
});
