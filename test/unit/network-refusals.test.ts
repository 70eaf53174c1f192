import { describe, expect, it } from 'vitest';
import { printable } from '../../src/endpoint/refuse-network.js';
import { networkRefusals } from '../../src/run/begin/network-refusals.js';
import type { Denial } from '../../src/supervisor/hooks.js';

/** What a run logs of its proxy's refusals (src/run/begin/network-refusals.ts): all, within bounds. */
function harness(inFlight?: string) {
  const logged: Record<string, unknown>[] = [];
  const denials: Denial[] = [];
  const refuse = networkRefusals({
    log: { append: (e) => logged.push(e) },
    onDenial: (d) => denials.push(d),
    bashInFlight: () => inFlight,
  });
  return { logged, denials, refuse };
}

describe('networkRefusals', () => {
  it('logs each refusal with its host, port, door and the Bash call; tells each host once per call', () => {
    const h = harness('toolu_1');
    h.refuse({ host: 'example.com', port: 443, via: 'connect' });
    h.refuse({ host: 'example.com', port: 443, via: 'connect' });
    h.refuse({ host: '', port: 0, via: 'socks' });
    expect(h.logged).toHaveLength(3);
    expect(h.logged[0]).toMatchObject({
      event: 'refused',
      source: 'sandbox',
      rule: 'network',
      tool: 'Bash',
      toolUseId: 'toolu_1',
      host: 'example.com',
      port: 443,
      via: 'connect',
      count: 1,
    });
    expect(h.logged[1]).toMatchObject({ count: 2 });
    expect(h.logged[2]!.reason).toContain('a host it did not name');
    expect(h.denials.map((d) => d.input)).toEqual(['example.com:443', 'a host it did not name']);
  });

  it('a loop of retries: a host’s first 20, then every 100th with its count', () => {
    const h = harness();
    for (let i = 0; i < 450; i++) h.refuse({ host: 'registry.npmjs.org', port: 443, via: 'connect' });
    expect(h.logged.map((e) => e.count)).toEqual(
      [...Array(20).keys()].map((i) => i + 1).concat([100, 200, 300, 400]),
    );
    expect(h.denials).toHaveLength(1);
  });

  it('a flood of names: 500 lines in all, then every 500th; 50 denials; 10,000 hosts, then one bucket', () => {
    const h = harness();
    for (let i = 0; i < 12_000; i++) h.refuse({ host: `h${i}.example`, port: 80, via: 'http' });
    expect(h.logged.length).toBeLessThanOrEqual(500 + 12_000 / 500);
    expect(h.logged.slice(500).map((e) => e.total)).toEqual([...Array(23).keys()].map((i) => (i + 2) * 500));
    expect(h.denials).toHaveLength(50);
    const last = h.logged.at(-1)!;
    expect(last).toMatchObject({ total: 12_000, input: 'more hosts' });
  });
});

describe('printable', () => {
  it('keeps a host name to printable ASCII and DNS length', () => {
    expect(printable('example.com')).toBe('example.com');
    expect(printable('evil\x1b]52;c;AAAA\x07.com')).toBe('evil?]52;c;AAAA?.com');
    expect(printable('a b\nc\u202e')).toBe('a?b?c?');
    expect(printable('x'.repeat(300))).toHaveLength(255);
  });
});
