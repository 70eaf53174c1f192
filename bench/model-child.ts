/**
 * The scripted model server in a process of its own, for the hooks bench: what agentbox does in
 * the bench's process (endpoint, stream reader, supervisor) must not delay the model's answers,
 * as it would not delay Anthropic's. Driven over IPC: `{ calls }` scripts the next session (each
 * call a tool use, then a closing text), answered `{ ok: true }`; the first message sent is the URL.
 */
import { scriptByTurn, startModelServer, text, tool } from '../test/fixtures/model-server/index.js';
import type { Call } from './hooks-lib.js';

const server = await startModelServer([]);
process.send!({ url: server.url });
process.on('message', (message: { calls: readonly Call[] }) => {
  server.setRules(scriptByTurn([...message.calls.map((c) => tool(c.tool, c.input)), text('done')]));
  server.requests.length = 0;
  process.send!({ ok: true });
});
process.on('disconnect', () => {
  void server.close().finally(() => process.exit(0));
});
