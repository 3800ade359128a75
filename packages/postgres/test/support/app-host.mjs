// An app server ("host") of the multi-host tests: a live hub on the PostgreSQL store, served over SSE on a free port
// of 127.0.0.1, whose worker streams `tokens` deltas `pauseMs` apart for each send. Prints `listening <port>`.
// Usage: node app-host.mjs <connection string> <store> <tokens> <pauseMs>
import { createServer } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { openConversationHub } from '@turnjournal/live';
import { createSseTransport } from '@turnjournal/live/sse';
import { openPostgresRecordStore } from '@turnjournal/postgres';

const [connectionString, storeName, tokens, pauseMs] = process.argv.slice(2);
const store = openPostgresRecordStore({ connectionString, store: storeName });
const hub = openConversationHub({ store, retention: false, deltaFlushMs: 5 });
const sse = createSseTransport({
  hub,
  authorize: (request) =>
    new URL(request.url ?? '/', 'http://host').searchParams.get('session') ?? { status: 400, message: 'no session' },
  run: async ({ run }) => {
    for (let n = 0; n < Number(tokens); n++) {
      if (run.signal.aborted) return;
      await run.delta(`t${n} `);
      await sleep(Number(pauseMs));
    }
    await run.done();
  },
  onError: (error, context) => process.stderr.write(`${context.op}: ${error?.stack ?? error}\n`),
});
const server = createServer((request, response) => {
  if (!sse.handle(request, response)) response.writeHead(404).end();
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${server.address().port}\n`));
process.on('SIGTERM', async () => {
  await sse.close();
  server.close();
  await hub.close();
  await store.close();
  process.exit(0);
});
