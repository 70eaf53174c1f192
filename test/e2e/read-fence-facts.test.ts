import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bash,
  type ModelServer,
  scriptByTurn,
  startModelServer,
  text,
  tool,
} from '../fixtures/model-server/index.js';
import { type ClaudeHome, claudeEnv, claudeHome, runClaude } from '../helpers/claude.js';
import { tempDir } from '../helpers/git-repo.js';
import { expectNoProcessesLeft, newTestTag } from '../helpers/processes.js';

/**
 * What Claude Code 2.1.330 does with the sandbox's read lists (docs/internals.md, "Reads in the
 * sandbox"): the facts agentbox's read fence (src/sandbox/read-allowlist.ts) is built on. If a new
 * Claude Code behaves otherwise, this file says so before a run leaks.
 */
const SECRET = 'FACTS-SECRET-7731';
/** The files the glob check reads, relative to the home. */
const GLOBBED = ['g/keep/f', 'g/other/f', 'g/.hid', 'g2/keep/f', 'g2/other/f', 'g2/.hid', '.cache/linked/ok'];

describe("Claude Code's sandbox and the read lists (measured)", () => {
  const tag = newTestTag();
  let server: ModelServer;
  let home: ClaudeHome;
  let h: string;
  let proj: string;
  const write = (rel: string, content: string) => {
    fs.mkdirSync(path.dirname(path.join(h, rel)), { recursive: true });
    fs.writeFileSync(path.join(h, rel), content);
  };
  beforeAll(async () => {
    server = await startModelServer([]);
    home = claudeHome();
    h = home.home;
    proj = path.join(h, 'proj');
    write('proj/src/a.txt', 'project file\n');
    write('.netrc', `${SECRET}\n`);
    write('.config/x/secret', `${SECRET}\n`);
    write('.cache/tool/ok', 'cache ok\n');
    write('.cache/tool/creds', `${SECRET}\n`);
    write('.cache/deep/own/f', 'own ok\n');
    write('.cache/deep/other/f', `${SECRET}\n`);
    write('.claude/.credentials.json', `${SECRET}\n`);
    fs.symlinkSync(path.join(h, '.netrc'), path.join(proj, 'link'));
    // For the globs: g's entries but `keep` are denied by a range class; g2's by a `[!k]` class.
    for (const dir of ['g', 'g2']) {
      write(`${dir}/keep/f`, 'keep ok\n');
      write(`${dir}/other/f`, `${SECRET}-${dir}-other\n`);
      write(`${dir}/.hid`, `${SECRET}-${dir}-hid\n`);
    }
    write('.cache/linked/ok', 'linked ok\n');
    fs.symlinkSync(path.join(h, '.cache', 'linked'), path.join(h, 'g', 'zlink'));
  });
  afterAll(async () => {
    await server?.close();
    home?.cleanup();
  });

  it('Bash obeys denyRead/allowRead (silently: ENOENT, no violation note); Read, Grep and Glob do not', async () => {
    const steps = {
      project: bash(`cat ${proj}/src/a.txt`),
      denied: bash(`cat ${h}/.netrc`),
      listing: bash(`ls -A ${h}`),
      allowed: bash(`cat ${h}/.cache/tool/ok`),
      configDir: bash(`cat ${h}/.claude/.credentials.json`),
      symlink: bash('cat link'),
      python: bash(`python3 -c "print(open('${h}/.netrc').read())"`),
      writeAllowed: bash(`echo w > ${h}/.cache/tool/w`),
      fileDenyInAllow: bash(`cat ${h}/.cache/tool/creds`),
      allowInDenyInAllow: bash(
        `cat ${h}/.cache/deep/own/f; cat ${h}/.cache/deep/other/f; ls ${h}/.cache/deep`,
      ),
      readNotApproved: tool('Read', { file_path: `${h}/.cache/tool/ok` }),
      readSymlink: tool('Read', { file_path: `${proj}/link` }),
      grep: tool('Grep', { pattern: 'FACTS-SECRET', path: h, output_mode: 'content' }),
      glob: tool('Glob', { pattern: '**/*', path: `${h}/.config` }),
      // One command: tail names each file it prints, and each it cannot open.
      globs: bash(`tail -n +1 ${GLOBBED.map((f) => `${h}/${f}`).join(' ')}`),
    };
    const names = Object.keys(steps);
    server.setRules(scriptByTurn([...Object.values(steps), text('done')]));
    const settings = path.join(h, 'settings.json');
    fs.writeFileSync(
      settings,
      JSON.stringify({
        sandbox: {
          enabled: true,
          failIfUnavailable: true,
          autoAllowBashIfSandboxed: true,
          allowUnsandboxedCommands: false,
          filesystem: {
            allowWrite: [proj],
            denyRead: [h, `${h}/.cache/tool/creds`, `${h}/.cache/deep`, `${h}/g/[ -jl-~]*`, `${h}/g2/[!k]*`],
            allowRead: [proj, `${h}/.cache`, `${h}/.cache/deep/own`, `${h}/g`, `${h}/g2`],
          },
        },
      }),
    );
    const result = await runClaude(
      [
        '-p',
        'go',
        '--output-format',
        'stream-json',
        '--verbose',
        '--settings',
        settings,
        '--allowedTools',
        'Grep,Glob',
      ],
      {
        cwd: proj,
        env: claudeEnv({ home, modelUrl: server.url, extra: { AGENTBOX_TEST_TAG: tag } }),
        timeoutMs: 120_000,
      },
    );
    expect(result.code, result.stderr).toBe(0);
    const results: { content: unknown; is_error?: boolean }[] = result.events
      .filter((e) => e.type === 'user')
      .flatMap((e) => e.message.content)
      .filter((b: { type: string }) => b.type === 'tool_result');
    const out = Object.fromEntries(names.map((n, i) => [n, JSON.stringify(results[i]?.content ?? null)]));
    if (process.env.FENCE_DEBUG) console.log(out);
    expect(out.project).toContain('project file');
    // A denied region reads as missing, to every program, and Claude Code notes no violation.
    expect(out.denied).toContain('No such file or directory');
    expect(out.configDir).toContain('No such file or directory');
    expect(out.symlink).toContain('No such file or directory');
    expect(out.python).toContain('[Errno 2] No such file or directory');
    for (const n of names) expect(out[n], n).not.toContain('sandbox_violations');
    // allowRead re-opens a path in it, read-only; the listing of the region shows only that.
    expect(out.listing).toMatch(/\.cache.*proj|proj.*\.cache/s);
    expect(out.listing).not.toContain('.netrc');
    expect(out.allowed).toContain('cache ok');
    expect(out.writeAllowed).toContain('Read-only file system');
    // A more specific denyRead inside an allowRead stays denied (a file: EACCES), and an allowRead
    // inside that opens again.
    expect(out.fileDenyInAllow).toContain('Permission denied');
    expect(out.allowInDenyInAllow).toContain('own ok');
    expect(out.allowInDenyInAllow).toMatch(/other\/f: No such file or directory/);
    // The Read tool, not pre-approved, is refused outside the working directory by Claude Code's
    // permission layer (symlinks resolved first), whatever the sandbox allows.
    expect(out.readNotApproved).toContain("haven't granted it yet");
    expect(out.readSymlink).toContain('resolves through a symlink');
    // Pre-approved, Grep and Glob go where the sandbox's lists deny: they are no part of it.
    expect(out.grep).toContain(SECRET);
    expect(out.glob).toContain('.config/x/secret');
    expect(JSON.stringify(results)).not.toContain('own ok\\nother');
    // A glob in denyRead is expanded as each command starts, entry by entry of its folder. A range
    // class works and `*` matches dotfiles; `!` (and `^`) in a class is no negation, only a character;
    // and an entry that is a symlink is followed: what it points to is denied (.cache/linked). So a
    // glob over a folder others can write to lets them hide any path from the run (not read one).
    const unreadable = (f: string) => String(out.globs).includes(`cannot open '${h}/${f}'`);
    expect(out.globs).toContain('keep ok');
    for (const f of ['g/other/f', 'g/.hid', 'g2/keep/f', '.cache/linked/ok'])
      expect(unreadable(f), f).toBe(true);
    expect(out.globs).toContain(`${SECRET}-g2-other`);
    expect(out.globs).toContain(`${SECRET}-g2-hid`);
  }, 180_000);

  it('a denied top level: other folders of / and of /tmp read as missing; the run keeps its own', async () => {
    // Another repository outside the home (/var/tmp: outside /tmp too) and another session's /tmp.
    const elsewhere = fs.realpathSync(fs.mkdtempSync('/var/tmp/rf-facts-'));
    const otherTmp = tempDir('rf-facts-other-');
    const runTmp = tempDir('rf-facts-run-');
    try {
      fs.writeFileSync(path.join(elsewhere, 'secret'), `${SECRET}\n`);
      fs.writeFileSync(path.join(otherTmp, 'secret'), `${SECRET}\n`);
      const system = [
        'usr',
        'bin',
        'sbin',
        'lib',
        'lib32',
        'lib64',
        'libx32',
        'etc',
        'opt',
        'proc',
        'dev',
        'sys',
      ];
      const tops = fs
        .readdirSync('/')
        .filter((c) => !system.includes(c))
        .map((c) => `/${c}`);
      const steps = {
        elsewhere: bash(`cat ${elsewhere}/secret`),
        otherTmp: bash(`cat ${otherTmp}/secret`),
        root: bash('ls /'),
        tmp: bash('ls -A /tmp'),
        cd: bash('mkdir -p sub && cd sub && pwd'),
        cwd: bash(`pwd && printenv TMPDIR && ls -A ${runTmp}`),
        tools: bash(`/usr/bin/python3 -c "print(2+2)"; node -e "console.log(require('os').tmpdir())"`),
        project: bash(`cat ${proj}/src/a.txt`),
      };
      const names = Object.keys(steps);
      server.setRules(scriptByTurn([...Object.values(steps), text('done')]));
      const settings = path.join(runTmp, 'settings.json');
      fs.writeFileSync(
        settings,
        JSON.stringify({
          sandbox: {
            enabled: true,
            failIfUnavailable: true,
            autoAllowBashIfSandboxed: true,
            allowUnsandboxedCommands: false,
            filesystem: {
              allowWrite: [proj, runTmp],
              denyRead: [...tops, h],
              allowRead: [proj, runTmp],
            },
          },
        }),
      );
      const result = await runClaude(
        ['-p', 'go', '--output-format', 'stream-json', '--verbose', '--settings', settings],
        {
          cwd: proj,
          env: claudeEnv({
            home,
            modelUrl: server.url,
            // As agentbox starts a run: with TMPDIR unset, claude's sandbox also bound the shared
            // /tmp/claude-<uid> writable and put its proxy sockets in /tmp (measured in a fix run).
            extra: { AGENTBOX_TEST_TAG: tag, CLAUDE_CODE_TMPDIR: runTmp, TMPDIR: runTmp },
          }),
          timeoutMs: 120_000,
        },
      );
      expect(result.code, result.stderr).toBe(0);
      const results: { content: unknown }[] = result.events
        .filter((e) => e.type === 'user')
        .flatMap((e) => e.message.content)
        .filter((b: { type: string }) => b.type === 'tool_result');
      const out = Object.fromEntries(names.map((n, i) => [n, JSON.stringify(results[i]?.content ?? null)]));
      if (process.env.FENCE_DEBUG) console.log(out);
      // Another repository outside the home and /tmp, another process's /tmp folder: missing.
      expect(out.elsewhere).toContain('No such file or directory');
      expect(out.otherTmp).toContain('No such file or directory');
      // /tmp shows only what is opened in it (the run's temp dir, the folder around the project).
      expect(out.tmp).toContain(path.basename(runTmp));
      expect(out.tmp).not.toContain(path.basename(otherTmp));
      expect(out.tmp).not.toMatch(/claude-\d|claude-http/);
      // Claude Code keeps its own temp files, cwd tracking and proxy sockets in CLAUDE_CODE_TMPDIR.
      expect(out.cd).toContain(`${proj}/sub`);
      expect(out.cwd).toContain(`${proj}/sub`);
      expect(out.cwd).toContain(`${runTmp}/claude-`);
      expect(out.cwd).toContain('cc-socks');
      expect(out.cwd).toContain('claude-http-');
      // The system's folders still work: python, node, the project.
      expect(out.tools).toMatch(/^"4\\n/);
      expect(out.tools).toContain(`${runTmp}/claude-`);
      expect(out.project).toContain('project file');
    } finally {
      fs.rmSync(elsewhere, { recursive: true, force: true });
    }
  }, 180_000);

  it('leaves no process behind', async () => {
    await expectNoProcessesLeft(tag);
  });
});
