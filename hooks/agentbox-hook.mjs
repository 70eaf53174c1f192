#!/usr/bin/env node
// Forwards one Claude Code hook event to the agentbox run it belongs to, for the events Claude
// Code does not deliver through http hooks (SessionStart fires only for command hooks). Reads the
// event from stdin, POSTs it to $AGENTBOX_URL/hook/<event> with the run's secret, prints the
// answer. Outside an agentbox run, or when the supervisor cannot be reached, it exits 0 and says
// nothing: a hook must never break a session.
import http from 'node:http';

const event = process.argv[2] ?? '';
const url = process.env.AGENTBOX_URL;
const token = process.env.AGENTBOX_TOKEN;
if (!url || !token || !/^[A-Za-z]+$/.test(event)) process.exit(0);

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
        if (res.statusCode === 200) process.stdout.write(Buffer.concat(out));
        process.exit(0);
      });
    },
  );
  req.on('error', () => process.exit(0));
  req.on('timeout', () => {
    req.destroy();
    process.exit(0);
  });
  req.end(body);
});
