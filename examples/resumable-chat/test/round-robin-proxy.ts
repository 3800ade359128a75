// A round-robin load balancer on 127.0.0.1 in front of several chat servers, as a browser meets them in production:
// each TCP connection goes to the next backend, with no stickiness. WebSocket connections take turns on a counter of
// their own, so that a test knows which server each tab's socket reaches whatever number of plain HTTP connections the
// browser opened for the page's files; both kinds alternate.
import { once } from 'node:events';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';

/** The most bytes of a request head read before choosing a backend: a longer head is refused. */
const MAX_HEAD_BYTES = 64 * 1024;
/** The socket errors of a peer that went away. */
const PEER_GONE = new Set(['ECONNRESET', 'EPIPE', 'ECONNREFUSED']);

export interface RoundRobinProxy {
  /** `http://127.0.0.1:<port>/`: what the browser opens. */
  readonly url: string;
  /** The backend index (into the ports given) of each WebSocket connection, in order of arrival. */
  readonly webSockets: readonly number[];
  /** Socket errors other than a peer going away (which is what closing a tab or killing a server does). */
  readonly unexpectedErrors: readonly Error[];
  close(): Promise<void>;
}

/** Starts a proxy alternating between the servers listening on `ports` of 127.0.0.1. */
export async function startRoundRobinProxy(ports: readonly number[]): Promise<RoundRobinProxy> {
  if (ports.length === 0) throw new Error('a round-robin proxy needs at least one backend');
  const sockets = new Set<Socket>();
  const webSockets: number[] = [];
  const unexpectedErrors: Error[] = [];
  const turns = { http: 0, webSocket: 0 };
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    // A peer that goes away mid-connection is what a browser closing a tab or a killed server does: the pair is torn
    // down. Any other failure is kept for the test to see.
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (!PEER_GONE.has(error.code ?? '')) unexpectedErrors.push(error);
      socket.destroy();
    });
  };

  const server = createServer((client) => {
    track(client);
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      if (head.indexOf('\r\n\r\n') < 0) {
        if (head.length > MAX_HEAD_BYTES) client.destroy();
        return;
      }
      client.off('data', onData);
      client.pause();
      const upgrade = /^upgrade:\s*websocket\s*$/im.test(head.toString('latin1', 0, head.indexOf('\r\n\r\n')));
      const index = upgrade ? turns.webSocket++ % ports.length : turns.http++ % ports.length;
      if (upgrade) webSockets.push(index);
      const backend = connect(ports[index] as number, '127.0.0.1');
      track(backend);
      backend.once('connect', () => {
        backend.write(head);
        client.pipe(backend);
        backend.pipe(client);
        client.resume();
      });
      // Either side ending ends the other: a backend killed mid-answer is a connection the browser sees drop.
      backend.once('close', () => client.destroy());
      client.once('close', () => backend.destroy());
    };
    client.on('data', onData);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    webSockets,
    unexpectedErrors,
    async close() {
      const closed = once(server, 'close');
      server.close();
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
