// The resumable chat server: static files over HTTP (the page and @turnjournal/client's modules), and seed 003's
// transport over one WebSocket per tab.
//
// Why a WebSocket rather than SSE: a resume is a conversation, not a download. The client's cursor (hello.lastSeq),
// its sends and its acks travel on the same ordered connection as the records, so the server knows exactly which seq
// each connection starts after, a send and its acceptance cannot overtake the records they cause, and the tests can
// count the frames one reconnect costs. SSE would need a second channel (POST) for sends and acks, and its built-in
// reconnect (fixed delay, Last-Event-ID) gives the page no control over backoff or over what it says on reconnect.
//
// The frames are those of @turnjournal/live/websocket (packages/live/README.md, "WebSocket transport"): the page
// connects to /ws?session=<id>, says { type: 'hello', clientId, lastSeq, epoch? }, sends chat.send and ack frames, and
// receives snapshot, record, live, chat.accepted / chat.rejected and error frames. The transport serves the frames in
// order, one subscription per connection, and cuts off a client that stops reading; this file adds the static page,
// the model worker and the test hooks.
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openConversationHub } from '@turnjournal/live';
import { attachWebSocketTransport } from '@turnjournal/live/websocket';
import { streamAnswer } from './runner.mjs';

const PUBLIC = join(dirname(fileURLToPath(import.meta.url)), '..', 'public');
// The page runs @turnjournal/client as it is published: its ES modules, served at /client/ (no bundler).
const CLIENT = dirname(fileURLToPath(import.meta.resolve('@turnjournal/client')));
const STATIC = {
  '/': ['index.html', 'text/html; charset=utf-8'],
  '/index.html': ['index.html', 'text/html; charset=utf-8'],
  '/app.js': ['app.js', 'text/javascript; charset=utf-8'],
  '/fold.js': ['fold.js', 'text/javascript; charset=utf-8'],
  '/style.css': ['style.css', 'text/css; charset=utf-8'],
  '/favicon.svg': ['favicon.svg', 'image/svg+xml'],
};

/**
 * Starts the chat server. Options: root (a directory: the file store) or store (a record store, e.g. PostgreSQL's),
 * host, port, model, testHooks (the /test/* endpoints and the model's "[hold]" gate), log (one JSON object per line),
 * hub (extra hub options).
 * Resolves to { url, port, hub, close }.
 */
export async function startChatServer(options) {
  const { root, store, host = '127.0.0.1', port = 8787, model, testHooks = false } = options;
  const log = options.log ?? ((entry) => process.stdout.write(`${JSON.stringify(entry)}\n`));
  // Failures of the hub's background work (retention, idle close) are logged; hub.metrics() counts them.
  const onError = ({ task, sessionId, code, error }) =>
    log({ event: 'hub_error', task, sessionId, code, error: String(error?.message ?? error) });
  // On a shared store, records are stamped and aged by the database's clock, so that every host agrees (TJ-STORE-026).
  const journals =
    store === undefined ? { root } : { store, ...(store.clock === undefined ? {} : { clock: store.clock }) };
  const hub = openConversationHub({ ...journals, onError, ...(options.hub ?? {}) });
  const runs = new Set(); // in-flight model runs: { promise }
  const hooks = { dropNextAccept: false };

  const http = createServer((request, response) => {
    serveHttp(request, response).catch((error) => {
      log({ event: 'http_error', error: String(error?.message ?? error) });
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  });

  async function serveHttp(request, response) {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (testHooks && url.pathname.startsWith('/test/')) return serveTestHook(url.pathname, response);
    const client = /^\/client\/([a-z-]+\.js)$/.exec(url.pathname);
    if (client !== null && request.method === 'GET') {
      const body = await readFile(join(CLIENT, client[1])).catch((error) => {
        if (error?.code === 'ENOENT') return null;
        throw error;
      });
      if (body !== null) {
        response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-store' });
        response.end(body);
        return;
      }
    }
    const entry = STATIC[url.pathname];
    if (entry === undefined || request.method !== 'GET') {
      response.writeHead(404, { 'content-type': 'text/plain' });
      response.end('not found');
      return;
    }
    const body = await readFile(join(PUBLIC, entry[0]));
    response.writeHead(200, { 'content-type': entry[1], 'cache-control': 'no-store' });
    response.end(body);
  }

  // Test hooks: each answers when the server-side event happened, so tests wait on events, never on sleeps.
  async function serveTestHook(path, response) {
    const reply = (value) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(value));
    };
    if (path === '/test/held') {
      await model.whenHeld();
      return reply({ held: true });
    }
    if (path === '/test/release') return reply({ released: model.release() });
    if (path === '/test/idle') {
      while (runs.size > 0) await Promise.all([...runs].map((run) => run.promise));
      return reply({ idle: true });
    }
    if (path === '/test/drop-next-accept') {
      hooks.dropNextAccept = true;
      return reply({ armed: true });
    }
    response.writeHead(404);
    response.end();
  }

  // Raw sockets per session, for the drop-next-accept test hook only: it cuts a connection between the durable send
  // and its acceptance, as a lost network does.
  const rawSockets = new Map();
  if (testHooks)
    http.on('upgrade', (request, socket) => {
      const sessionId = sessionOf(request);
      if (sessionId === null) return;
      const set = rawSockets.get(sessionId) ?? new Set();
      set.add(socket);
      rawSockets.set(sessionId, set);
      socket.on('close', () => set.delete(socket));
    });

  const transport = attachWebSocketTransport({
    hub,
    server: http,
    path: '/ws',
    // The page names its session in the URL; a real app decides here who may open which session.
    authorize: (request) => sessionOf(request) ?? { status: 400, message: 'name a session: /ws?session=<id>' },
    run({ run, content, sessionId }) {
      if (hooks.dropNextAccept) {
        hooks.dropNextAccept = false;
        for (const socket of rawSockets.get(sessionId) ?? []) socket.destroy();
      }
      const entry = { promise: null };
      entry.promise = streamAnswer({ model, prompt: content, run, signal: run.signal, log }).finally(() =>
        runs.delete(entry),
      );
      runs.add(entry);
      return entry.promise;
    },
    onError: (error, context) => log({ event: 'transport_error', ...context, error: String(error?.message ?? error) }),
  });

  await new Promise((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const address = http.address();
  const url = `http://${host}:${address.port}/`;

  return {
    url,
    port: address.port,
    hub,
    /** Graceful stop: active runs are cancelled as `server_shutdown` (their open segment kept as partial). */
    async close() {
      await transport.close();
      http.close();
      await hub.close();
      await Promise.all([...runs].map((run) => run.promise));
    },
  };
}

function sessionOf(request) {
  return new URL(request.url ?? '/', 'http://localhost').searchParams.get('session');
}
