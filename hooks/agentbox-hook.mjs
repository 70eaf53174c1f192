#!/usr/bin/env node
// Forwards one Claude Code hook event to the agentbox run it belongs to, for the events Claude
// Code does not deliver through http hooks (SessionStart fires only for command hooks). Usage:
// `agentbox-hook.mjs <Event> <address book>`: reads the event from stdin, POSTs it to the run's
// endpoint (url and secret from the address book, a file in the run's private area that the agent
// cannot read), prints the answer. Outside an agentbox run, with AGENTBOX=0, or when the supervisor
// cannot be reached, it exits 0 and says nothing: a hook must never break a session.
// AGENTBOX_HOOK_DEBUG=1 says on stderr what it did, or why it did nothing.
import fs from 'node:fs';
import http from 'node:http';

const say = (what) => {
  if (process.env.AGENTBOX_HOOK_DEBUG === '1') process.stderr.write(`agentbox-hook: ${what}\n`);
};
const debug = (why) => {
  say(why);
  process.exit(0);
};
const event = process.argv[2] ?? '';
if (process.env.AGENTBOX === '0') debug('off (AGENTBOX=0)');
if (!/^[A-Za-z]+$/.test(event)) debug(`not an event name: ${event}`);
let url;
let token;
try {
  ({ url, token } = JSON.parse(fs.readFileSync(process.argv[3] ?? '', 'utf8')));
} catch (error) {
  debug(`no address book: ${error.message}`);
}
if (typeof url !== 'string' || typeof token !== 'string') debug('the address book has no url or token');

const chunks = [];
process.stdin.on('data', (c) => chunks.push(c));
process.stdin.on('end', () => {
  const body = Buffer.concat(chunks);
  const req = http.request(
    `${url}/hook/${event}`,
    {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-length': body.length,
        authorization: `Bearer ${token}`,
      },
      timeout: 10_000,
    },
    (res) => {
      const out = [];
      res.on('data', (c) => out.push(c));
      res.on('end', () => {
        say(`${event} sent to ${url}: ${res.statusCode}`);
        if (res.statusCode === 200) process.stdout.write(Buffer.concat(out));
        process.exit(0);
      });
    },
  );
  req.on('error', (error) => debug(`cannot reach ${url}: ${error.message}`));
  req.on('timeout', () => {
    req.destroy();
    debug(`no answer from ${url} within 10 s`);
  });
  req.end(body);
});
