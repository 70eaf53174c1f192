import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bash } from '../fixtures/model-server/index.js';
import { expectNoProcessesLeft } from '../helpers/processes.js';
import { type Project, project } from '../helpers/project.js';
import { scriptedRun } from '../helpers/scripted-run.js';

/** 3,000 requests on one kept-alive connection to the proxy port (the endpoint): what each got. */
const FLOOD = `python3 - <<'EOF'
import http.client
c = http.client.HTTPConnection('localhost', 3128, timeout=10)
codes = {}
for i in range(3000):
    c.request('POST', '/hook/Stop' if i % 2 else '/x%d' % i + 'y' * 4000, body='{}')
    r = c.getresponse(); r.read(); codes[r.status] = codes.get(r.status, 0) + 1
print('codes', sorted(codes.items()))
EOF`;

/**
 * A run that reaches no host but its endpoint answers for Claude Code's sandbox proxies itself
 * (src/endpoint/refuse-network.ts): its commands' traffic reaches agentbox, which refuses it by
 * every door and logs each refusal with the host; Claude Code's hooks still arrive through it.
 * Real Claude Code, its sandbox (bubblewrap, the network namespace), a scripted model.
 */
describe("agentbox's refusing proxy, on the real Claude Code and its sandbox", () => {
  let p: Project;
  beforeAll(async () => {
    p = await project({ files: { 'a.txt': 'a\n' } });
  });
  afterAll(async () => {
    const tag = p?.tag;
    await p?.cleanup();
    if (tag) await expectNoProcessesLeft(tag);
  });

  const ATTEMPTS = [
    // Through the HTTP proxy claude sets: plain http (absolute-form), https (CONNECT).
    'curl -sS -m 5 http://example.com/; echo rc=$?',
    'curl -sS -m 5 https://example.com/; echo rc=$?',
    // git's https through the proxy: CONNECT.
    'git ls-remote https://github.com/example/nothing.git 2>&1 | tail -2; echo rc=$?',
    // Through the SOCKS proxy claude sets (FTP_PROXY, the bridge at localhost:1080): by name, by address.
    'curl -sS -m 5 -x "$FTP_PROXY" http://socks.example.org/; echo rc=$?',
    'curl -sS -m 5 --socks5 localhost:1080 http://203.0.113.7:8080/; echo rc=$?',
    // Around the proxies: no route from the namespace, whatever the variables say.
    'env -u http_proxy -u HTTP_PROXY -u https_proxy -u HTTPS_PROXY -u ALL_PROXY -u all_proxy curl -sS -m 5 http://example.com/; echo rc=$?',
    `python3 -c "import socket; socket.create_connection(('1.1.1.1', 80), 5)" 2>&1 | tail -1`,
    // The endpoint itself, through the bridge, without its token: a flood of refusals, each new path
    // a new line before (disk filled at the loop's pace); origin-form and the hook path alike.
    FLOOD,
  ];

  it('refuses http, CONNECT and SOCKS by every spelling, logs each with its host, and the run ends by its own hooks', async () => {
    const run = await scriptedRun(
      p,
      'fix',
      'reach the network',
      ATTEMPTS.map((c) => bash(c)),
    );
    const out = ATTEMPTS.map((_, turn) => run.results(turn)[0]?.content ?? '');
    // The model sees the proxy's own refusal (the words Claude Code's proxy uses).
    expect(out[0]).toContain('Connection blocked by network allowlist');
    expect(out[1]).toMatch(/CONNECT tunnel failed, response 403/);
    expect(out[2]).toMatch(/403|unable to access/);
    expect(out[3]).toMatch(/rc=9[17]/);
    expect(out[4]).toMatch(/rc=9[17]/);
    // Without the proxy there is no network at all: the kernel's namespace.
    expect(out[5]).toMatch(/Could not resolve host|rc=[1-9]/);
    expect(out[6]).toMatch(/Error|unreachable|refused/i);
    expect(out.join('\n')).not.toMatch(/Example Domain/);
    // Claude Code does not know of these refusals (measured): agentbox's log is the record.
    expect(out.join('\n')).not.toContain('<sandbox_violations>');

    // Each refusal is logged by agentbox with where it was for and by which door.
    const refused = p.events(run.name).filter((e) => e.event === 'refused' && e.rule === 'network');
    const seen = refused.map((e) => `${e.via} ${e.host}:${e.port}`);
    expect(seen).toEqual(
      expect.arrayContaining([
        'http example.com:80',
        'connect example.com:443',
        'connect github.com:443',
        'socks socks.example.org:80',
        'socks 203.0.113.7:8080',
      ]),
    );
    for (const e of refused) expect(e).toMatchObject({ source: 'sandbox', tool: 'Bash' });
    // Each tied to the command that asked (the one Bash call running then).
    for (const [turn, host] of ['example.com:80', 'example.com:443', 'github.com:443'].entries())
      expect(refused.find((e) => `${e.host}:${e.port}` === host)?.toolUseId, host).toBe(
        run.results(turn)[0]?.toolUseId,
      );
    // The report names each host once.
    const report = p.read(run.name, 'report.md');
    expect(report.match(/refused example\.com:80 /g)).toHaveLength(1);
    expect(report).toContain('socks.example.org:80');

    // Claude Code's hooks reached the endpoint through the same port: the run ended by its Stop.
    expect(p.state(run.name).status).toBe('DONE'); // no change to review
    expect(p.events(run.name).filter((e) => e.event === 'Stop')).toHaveLength(1);
    // The flood: every request refused (401), and logged within bounds, the count kept.
    expect(out[7]).toContain('codes [(401, 3000)]');
    const problems = p.events(run.name).filter((e) => e.event === 'endpoint_problem');
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.length).toBeLessThanOrEqual(60);
    expect(Math.max(...problems.map((e) => e.count as number))).toBe(3000);
    expect(fs.statSync(path.join(p.runDir(run.name), 'events.jsonl')).size).toBeLessThan(200_000);
  });

  it("a run with sandbox.allowed_domains keeps Claude Code's own proxies: the refusal is its sandbox's, recorded from the stream", async () => {
    fs.writeFileSync(path.join(p.repo.dir, 'agentbox.yaml'), 'sandbox:\n  allowed_domains: [example.net]\n');
    p.repo.commit('allow example.net');
    const run = await scriptedRun(p, 'fix', 'reach another host', [
      bash('curl -sS -m 5 https://example.com/; echo rc=$?'),
    ]);
    const out = run.results(0)[0]?.content ?? '';
    expect(out).toMatch(/CONNECT tunnel failed, response 403/);
    const events = p.events(run.name);
    // Not agentbox's proxy: no network refusal of its own; Claude Code's violations note names it.
    expect(events.filter((e) => e.rule === 'network')).toEqual([]);
    expect(events.find((e) => e.event === 'refused' && e.source === 'sandbox')?.reason).toMatch(
      /example\.com/,
    );
  });
});
