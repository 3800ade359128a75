// The resumable chat server: static files over HTTP, and seed 003's transport over one WebSocket per tab.
//
// Why a WebSocket rather than SSE: a resume is a conversation, not a download. The client's cursor (hello.lastSeq),
// its sends and its acks travel on the same ordered connection as the records, so the server knows exactly which seq
// each connection starts after, a send and its acceptance cannot overtake the records they cause, and the tests can
// count the frames one reconnect costs. SSE would need a second channel (POST) for sends and acks, and its built-in
// reconnect (fixed delay, Last-Event-ID) gives the page no control over backoff or over what it says on reconnect.
//
// Contract (client -> server):
//   { type: 'hello', sessionId, clientId, lastSeq, epoch? }
//                                                       lastSeq null: "I hold nothing, send the whole view"; epoch: the
//                                                       view's or record's epoch lastSeq belongs to (spec §6.7)
//   { type: 'chat.send', requestId, payload: { content } }
//   { type: 'ack', requestId, throughSeq }              the client has shown this finished run
// Server -> client:
//   { type: 'snapshot', mode: 'full'|'compacted'|'ahead'|'reset', payload: ConversationView, runs }  render this
//                                                       (reset: the session was created again; lastSeq was the old one's)
//   { type: 'snapshot', mode: 'resume', after, head }   no view: the records after `after` follow
//   { seq, ts, type, requestId, payload }               one event-log record (replayed, then live)
//   { type: 'live', head }                              the replay reached the head seen at hello
//   { type: 'chat.accepted', requestId, created, status } | { type: 'chat.rejected', requestId, code, message }
//   { type: 'error', code, message }
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openConversationHub } from '@turnjournal/live';
import { WebSocketServer } from 'ws';
import { streamAnswer } from './runner.mjs';

const PUBLIC = join(dirname(fileURLToPath(import.meta.url)), '..', 'public');
const STATIC = {
  '/': ['index.html', 'text/html; charset=utf-8'],
  '/index.html': ['index.html', 'text/html; charset=utf-8'],
  '/app.js': ['app.js', 'text/javascript; charset=utf-8'],
  '/fold.js': ['fold.js', 'text/javascript; charset=utf-8'],
  '/style.css': ['style.css', 'text/css; charset=utf-8'],
  '/favicon.svg': ['favicon.svg', 'image/svg+xml'],
};
/** Frames a slow client may have queued before the server waits for its socket to drain. */
const HIGH_WATER_BYTES = 1 << 20;

/**
 * Starts the chat server. Options: root (the store), host, port, model, testHooks (the /test/* endpoints and the
 * model's "[hold]" gate), log (one JSON object per line), hub (extra hub options).
 * Resolves to { url, port, hub, close }.
 */
export async function startChatServer(options) {
  const { root, host = '127.0.0.1', port = 8787, model, testHooks = false } = options;
  const log = options.log ?? ((entry) => process.stdout.write(`${JSON.stringify(entry)}\n`));
  // Failures of the hub's background work (retention, idle close) are logged; hub.metrics() counts them.
  const onError = ({ task, sessionId, code, error }) =>
    log({ event: 'hub_error', task, sessionId, code, error: String(error?.message ?? error) });
  const hub = openConversationHub({ root, onError, ...(options.hub ?? {}) });
  const runs = new Set(); // in-flight model runs: { promise, controller }
  const sendQueues = new Map(); // sessionId -> tail of its serialised sends
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

  const wss = new WebSocketServer({ server: http, path: '/ws', maxPayload: 1 << 20 });
  wss.on('connection', (socket) => {
    const connection = { socket, sessionId: null, clientId: null, subscription: null, closed: false };
    socket.on('message', (data) => {
      let message;
      try {
        message = JSON.parse(String(data));
      } catch {
        return sendFrame(connection, { type: 'error', code: 'invalid_request', message: 'frames are JSON objects' });
      }
      handle(connection, message).catch((error) => {
        sendFrame(connection, { type: 'error', code: error?.code ?? 'internal', message: String(error?.message) });
      });
    });
    socket.on('close', () => {
      connection.closed = true;
      connection.subscription?.close();
    });
    socket.on('error', () => undefined);
  });

  async function handle(connection, message) {
    if (typeof message !== 'object' || message === null) throw coded('invalid_request', 'frames are JSON objects');
    if (message.type === 'hello') return hello(connection, message);
    if (connection.sessionId === null) throw coded('invalid_request', 'say hello first');
    if (message.type === 'chat.send') return chatSend(connection, message);
    if (message.type === 'ack') {
      const session = await hub.session(connection.sessionId);
      await session.ack(message.requestId, { clientId: connection.clientId, throughSeq: message.throughSeq });
      return;
    }
    throw coded('invalid_request', `unknown frame type ${JSON.stringify(String(message.type)).slice(0, 40)}`);
  }

  async function hello(connection, message) {
    const { sessionId, clientId } = message;
    if (typeof clientId !== 'string' || clientId === '') throw coded('invalid_request', 'hello needs a clientId');
    const lastSeq = message.lastSeq ?? null;
    if (lastSeq !== null && (!Number.isSafeInteger(lastSeq) || lastSeq < -1))
      throw coded('invalid_request', 'lastSeq is an integer >= -1 or null');
    const { epoch } = message;
    if (epoch !== undefined && epoch !== null && typeof epoch !== 'string')
      throw coded('invalid_request', 'epoch is a string or null');
    connection.subscription?.close();
    const session = await hub.session(sessionId);
    connection.sessionId = sessionId;
    connection.clientId = clientId;
    // Everything below up to subscribe() is synchronous: the view, the head and the cursor describe one state.
    const head = session.durableSeq;
    let after;
    if (lastSeq === null) {
      const view = session.snapshot({ clientId });
      sendFrame(connection, { type: 'snapshot', mode: 'full', payload: view, runs: runStatuses(session, view) });
      after = view.lastSeq ?? -1;
    } else {
      sendFrame(connection, { type: 'snapshot', mode: 'resume', after: lastSeq, head });
      after = lastSeq;
    }
    // A cursor of another history of the session (its files were removed and created again) is answered with a
    // `reset` snapshot, never with the new conversation's records after it (TJ-LIVE-020).
    const subscription = session.subscribe({ after, ...(lastSeq === null || epoch === undefined ? {} : { epoch }) });
    connection.subscription = subscription;
    log({ event: 'hello', sessionId, clientId, lastSeq, head });
    follow(connection, session, subscription, head).catch((error) => {
      // The session failed or closed under the connection: the client reconnects and the next open recovers it.
      log({ event: 'follow_error', sessionId, error: String(error?.message ?? error) });
      connection.socket.close(1011, 'session unavailable');
    });
  }

  // Forwards a subscription to the socket: replayed records, then live ones; a cut-off subscriber resumes from its
  // cursor (the log serves it), so a slow tab costs the server one disk batch, not an unbounded queue.
  async function follow(connection, session, first, head) {
    let subscription = first;
    let caughtUp = first.cursor >= head;
    if (caughtUp) sendFrame(connection, { type: 'live', head });
    while (!connection.closed && connection.subscription === subscription) {
      let resumeAfter = null;
      for await (const event of subscription) {
        if (event.kind === 'record') {
          const { record } = event;
          await sendFrame(connection, { ...record, requestId: record.payload?.request_id ?? null });
          if (!caughtUp && record.seq >= head) {
            caughtUp = true;
            sendFrame(connection, { type: 'live', head: record.seq });
          }
        } else if (event.kind === 'snapshot') {
          const own = session.snapshot({ clientId: connection.clientId });
          const view = own.lastSeq === event.view.lastSeq ? own : event.view;
          sendFrame(connection, {
            type: 'snapshot',
            mode: event.reason,
            payload: view,
            runs: runStatuses(session, view),
          });
          if (!caughtUp) {
            caughtUp = true;
            sendFrame(connection, { type: 'live', head: view.lastSeq ?? -1 });
          }
        } else if (event.kind === 'cut_off') resumeAfter = event.cursor;
      }
      if (resumeAfter === null || connection.closed || session.closed) break;
      subscription = session.subscribe({ after: resumeAfter });
      connection.subscription = subscription;
    }
    // The session closed under a live connection (server shutdown, idle close cannot happen with a subscriber).
    if (!connection.closed && connection.subscription === subscription) connection.socket.close(1012, 'session closed');
  }

  async function chatSend(connection, message) {
    const { requestId } = message;
    const content = message.payload?.content;
    const sessionId = connection.sessionId;
    // One send at a time per session: a double click's second frame waits for the first and is answered as a retry.
    const previous = sendQueues.get(sessionId) ?? Promise.resolve();
    const mine = previous.then(async () => {
      const session = await hub.session(sessionId);
      try {
        const sent = await session.send({ requestId, content });
        if (sent.created) startRun(sent.run, content);
        if (hooks.dropNextAccept) {
          hooks.dropNextAccept = false;
          connection.socket.terminate(); // test hook: the acceptance is lost with the connection
          return;
        }
        sendFrame(connection, { type: 'chat.accepted', requestId, created: sent.created, status: sent.status });
      } catch (error) {
        sendFrame(connection, {
          type: 'chat.rejected',
          requestId: typeof requestId === 'string' ? requestId : null,
          code: error?.code ?? 'internal',
          message: String(error?.message ?? error),
        });
      }
    });
    const tail = mine.catch(() => undefined);
    sendQueues.set(sessionId, tail);
    await mine;
    if (sendQueues.get(sessionId) === tail) sendQueues.delete(sessionId);
  }

  function startRun(run, prompt) {
    const controller = new AbortController();
    const entry = { controller, promise: null };
    entry.promise = streamAnswer({ model, prompt, run, signal: controller.signal, log }).finally(() =>
      runs.delete(entry),
    );
    runs.add(entry);
  }

  function sendFrame(connection, frame) {
    if (connection.closed || connection.socket.readyState !== 1) return Promise.resolve();
    const data = JSON.stringify(frame);
    if (connection.socket.bufferedAmount < HIGH_WATER_BYTES) {
      connection.socket.send(data);
      return Promise.resolve();
    }
    return new Promise((resolve) => connection.socket.send(data, () => resolve()));
  }

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
    /** Graceful stop: active runs are cancelled (their open segment kept as partial), then the hub closes. */
    async close() {
      for (const client of wss.clients) client.close(1012, 'server stopping');
      wss.close();
      http.close();
      for (const run of runs) run.controller.abort();
      await Promise.all([...runs].map((run) => run.promise));
      await hub.close();
    },
  };
}

/** The outcome of every turn of the view (the view lists the active run and the missed ones, not the others). */
function runStatuses(session, view) {
  const statuses = {};
  for (const message of view.messages) {
    const requestId = message.request_id;
    if (message.role !== 'user' || typeof requestId !== 'string') continue;
    statuses[requestId] = session.statusOf(requestId) ?? 'interrupted';
  }
  return statuses;
}

function coded(code, message) {
  return Object.assign(new Error(message), { code });
}
