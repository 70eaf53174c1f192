import { processIo } from './context.js';
import { run } from './run.js';

// The one place that reads process globals and calls process.exit.
const env = process.env;
const code = await run(process.argv.slice(2), { cwd: process.cwd(), env, io: processIo(process, env) });
process.exitCode = code;
