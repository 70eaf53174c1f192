import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from './git-repo.js';
import { killWithEnv } from './processes.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The real Claude Code binary from devDependencies (symlinks resolved). */
export const CLAUDE_BIN: string = fs.realpathSync(path.join(REPO_ROOT, 'node_modules/.bin/claude'));

export const TEST_API_KEY = 'sk-ant-test-0123456789abcdefghij';

export interface ClaudeHome {
  home: string;
  configDir: string;
  cleanup(): void;
}

/** A throwaway HOME with `.claude` in it, so no test reads or writes the user's ~/.claude. */
export function claudeHome(): ClaudeHome {
  const home = tempDir('agentbox-claude-home-');
  const configDir = path.join(home, '.claude');
  fs.mkdirSync(configDir);
  return { home, configDir, cleanup: () => fs.rmSync(home, { recursive: true, force: true }) };
}

/** An environment built from scratch: nothing from the developer's shell leaks into a run. */
export function claudeEnv(opts: {
  home: ClaudeHome;
  modelUrl: string;
  apiKey?: string;
  extra?: Record<string, string>;
}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: opts.home.home,
    CLAUDE_CONFIG_DIR: opts.home.configDir,
    ANTHROPIC_BASE_URL: opts.modelUrl,
    ANTHROPIC_API_KEY: opts.apiKey ?? TEST_API_KEY,
    // Without this a failing endpoint is retried for about 180 s.
    CLAUDE_CODE_MAX_RETRIES: '0',
    // The machine is offline: anything reaching for the internet would only add waits.
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    LANG: 'C.UTF-8',
    TERM: 'xterm-256color',
    ...opts.extra,
  };
}

export interface ClaudeResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Every stdout line that parses as JSON (stream-json events). */
  events: any[];
}

function parseEvents(stdout: string): unknown[] {
  return stdout.split('\n').flatMap((line) => {
    if (!line.trim()) return [];
    try {
      return [JSON.parse(line)];
    } catch {
      return [];
    }
  });
}

// Marks every process of one run (see reap), and the runs still going when the test process exits.
const RUN_MARK = 'AGENTBOX_HARNESS_RUN';
const liveRuns = new Map<string, number | undefined>();
let exitHookInstalled = false;

/**
 * Kills a run's process group, then every process still carrying its mark.
 * NOTE: the group kill is not enough: Claude Code starts Bash tool commands in their own session,
 * so a backgrounded `sleep 30 &` outlives claude and escapes its process group.
 */
function reap(mark: string, pid: number | undefined): void {
  if (pid !== undefined) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // ESRCH: the whole group is already gone.
    }
  }
  killWithEnv(RUN_MARK, mark);
}

/**
 * Runs claude to completion in its own process group. Whatever it leaves behind (Bash tool
 * children) is killed when it exits; on timeout everything is killed and the promise rejects.
 */
export function runClaude(
  args: string[],
  opts: { cwd: string; env: Record<string, string>; timeoutMs?: number },
): Promise<ClaudeResult> {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const [mark, pid] of liveRuns) reap(mark, pid);
    });
  }
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const mark = randomBytes(8).toString('hex');
  return new Promise((resolve, reject) => {
    const child = spawn(CLAUDE_BIN, args, {
      cwd: opts.cwd,
      env: { ...opts.env, [RUN_MARK]: mark },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    liveRuns.set(mark, child.pid);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      reap(mark, child.pid);
    }, timeoutMs);
    // NOTE: 'close' waits for every holder of stdout to exit, so leftovers are killed on 'exit'.
    child.on('exit', () => reap(mark, child.pid));
    const settle = () => {
      clearTimeout(timer);
      liveRuns.delete(mark);
    };
    child.on('error', (error) => {
      settle();
      reject(error);
    });
    child.on('close', (code, signal) => {
      settle();
      if (timedOut) {
        const tail = `${stderr}\n${stdout}`.trim().slice(-2000);
        reject(new Error(`claude ${args.join(' ')} timed out after ${timeoutMs} ms; output tail:\n${tail}`));
        return;
      }
      resolve({ code, signal, stdout, stderr, events: parseEvents(stdout) });
    });
  });
}

/**
 * Writes `configDir/.claude.json` so interactive claude starts without onboarding, the API-key
 * question or the trust dialog. Keeps whatever else the file already holds.
 */
export function prepareInteractiveConfig(opts: {
  configDir: string;
  projectDirs: string[];
  apiKey: string;
}): void {
  const file = path.join(opts.configDir, '.claude.json');
  const current = fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : {};
  const projects = { ...current.projects };
  for (const dir of opts.projectDirs) {
    projects[dir] = { ...projects[dir], hasTrustDialogAccepted: true };
  }
  const config = {
    ...current,
    hasCompletedOnboarding: true,
    theme: 'dark',
    customApiKeyResponses: { approved: [opts.apiKey.slice(-20)], rejected: [] },
    projects,
  };
  fs.mkdirSync(opts.configDir, { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`);
}
