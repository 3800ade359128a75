// Server process of the live-memory figure: a hub with the WebSocket and SSE transports on 127.0.0.1, so that its
// memory is the server's alone (the figure's clients run in the harness). It writes a session `big` of about
// <sessionBytes> (tool results of 256 KiB) and an empty session `idle`, prints {"port": N}, then answers one JSON line
// per command read from stdin:
//   measure        → {"rss", "heapUsed", "ws", "sse"} after two full GCs (run with --expose-gc)
//   sample         → starts sampling RSS every 10 ms from a baseline taken after GC; answers {"baseline"}
//   peak           → stops sampling; answers {"baseline", "peak", "ws", "sse"}
//   count          → {"ws", "sse"}: the connections open now
//   exit           → closes everything and exits
// Plain JavaScript on purpose: no TypeScript loader adds its own memory.
// Usage: node --expose-gc bench/child/live-memory-server.mjs <root> <sessionBytes> <maxSubscribersPerSession>
import { createServer } from 'node:http';
import { createInterface } from 'node:readline';

const [root, sessionBytesArg, subscribersArg] = process.argv.slice(2);
const live = await import(process.env.TJ_BENCH_LIVE ?? '../../packages/live/dist/index.js');
const liveDir = new URL(
  '.',
  process.env.TJ_BENCH_LIVE ?? new URL('../../packages/live/dist/index.js', import.meta.url),
);
const { attachWebSocketTransport } = await import(new URL('websocket/index.js', liveDir).href);
const { createSseTransport } = await import(new URL('sse/index.js', liveDir).href);

const hub = live.openConversationHub({ root, retention: false });
const big = await hub.session('big');
const sent = await big.send({ requestId: 'r1', content: 'a long session' });
if (!sent.created) throw new Error('the run of the big session was not created');
const output = 'o'.repeat(256 * 1024);
for (let i = 0; i * 2 * output.length < Number(sessionBytesArg); i += 1)
  await sent.run.toolResult({ toolCallId: `c${i}`, output });
await sent.run.done();
await hub.session('idle');

const authorize = (request) => new URL(request.url ?? '/', 'http://x').searchParams.get('session') ?? { status: 401 };
const run = () => undefined;
const maxSubscribersPerSession = Number(subscribersArg);
// The defaults but a 5 s heartbeat: a paused WebSocket peer that the drain wait does not catch (its frames fit the
// loopback buffers) is dropped by the heartbeat, sooner than with the 30 s default.
const heartbeatMs = 5000;
const sse = createSseTransport({ hub, authorize, run, maxSubscribersPerSession, heartbeatMs });
const http = createServer((request, response) => {
  if (!sse.handle(request, response)) response.writeHead(404).end();
});
const ws = attachWebSocketTransport({ hub, server: http, authorize, run, maxSubscribersPerSession, heartbeatMs });
await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
console.log(JSON.stringify({ port: http.address().port, bigSeq: big.durableSeq }));

function collect() {
  globalThis.gc();
  globalThis.gc();
}
let sampling = null;
for await (const line of createInterface({ input: process.stdin })) {
  const counts = { ws: ws.connections, sse: sse.connections };
  if (line === 'measure') {
    collect();
    const { rss, heapUsed } = process.memoryUsage();
    console.log(JSON.stringify({ rss, heapUsed, ...counts }));
  } else if (line === 'sample') {
    collect();
    const baseline = process.memoryUsage().rss;
    sampling = { baseline, peak: baseline };
    sampling.timer = setInterval(() => {
      sampling.peak = Math.max(sampling.peak, process.memoryUsage().rss);
    }, 10);
    console.log(JSON.stringify({ baseline }));
  } else if (line === 'peak') {
    clearInterval(sampling.timer);
    sampling.peak = Math.max(sampling.peak, process.memoryUsage().rss);
    console.log(JSON.stringify({ baseline: sampling.baseline, peak: sampling.peak, ...counts }));
  } else if (line === 'count') console.log(JSON.stringify(counts));
  else if (line === 'exit') break;
}
await ws.close();
await sse.close();
await hub.close();
http.closeAllConnections();
http.close();
