// A TCP proxy on 127.0.0.1 in front of the test server's Unix socket, which can cut a connection at a chosen moment of
// the wire protocol: what a network failure, a load balancer's reset or a server's crash does to a client that has
// sent a COMMIT and waits for its answer. The server side is the socket (no TCP port to collide on); the client side
// is real TCP, so node-postgres sees a real reset.
import { once } from 'node:events';
import { connect as connectSocket, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';

/** When an armed proxy cuts the connection that sends one of `needles`. */
export type CutMoment =
  /** The matching bytes are forwarded; the server's first answer to them is not, and both sockets are cut. */
  | 'after-commit-sent'
  /** The matching bytes are not forwarded: both sockets are cut before the server sees them. */
  | 'before-commit-sent'
  /**
   * The client's socket is cut at once; the matching bytes are held and reach the server only at `deliverHeld()`:
   * a statement delayed in the network (or read late by a busy server) that runs after the client gave up on it.
   */
  | 'held';

export interface CutOptions {
  /** Byte strings of which the client's message must contain one (a line's bytes, raw or in hex). */
  readonly needles: readonly Buffer[];
  readonly moment: CutMoment;
  /** When true, the cut also ends every other connection and refuses new ones until `reopen()`: the database is gone. */
  readonly unreachable?: boolean;
}

export interface CuttingProxy {
  /** A `postgresql://` URL through the proxy. */
  readonly connectionString: string;
  /** Cuts the next connection whose client sends one of the needles; resolves once it did. */
  armCut(options: CutOptions): Promise<void>;
  /** Sends the bytes a `held` cut kept to the server; resolves once the server answered them (the answer is dropped). */
  deliverHeld(): Promise<void>;
  /** Accepts connections again after an `unreachable` cut. */
  reopen(): void;
  close(): Promise<void>;
}

interface Pair {
  readonly client: Socket;
  readonly server: Socket;
}

/** Starts a proxy to the server whose socket is in `socketDir`, logging in as `user`. */
export async function startCuttingProxy(socketDir: string, user: string): Promise<CuttingProxy> {
  const pairs = new Set<Pair>();
  let refusing = false;
  let armed: (CutOptions & { done: () => void }) | null = null;
  let held: { readonly server: Socket; readonly bytes: Buffer[] } | null = null;

  const cutAll = () => {
    for (const pair of pairs) destroy(pair);
  };
  const destroy = (pair: Pair) => {
    pairs.delete(pair);
    pair.client.destroy();
    pair.server.destroy();
  };

  const proxy: Server = createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    const server = connectSocket({ path: join(socketDir, '.s.PGSQL.5432') });
    const pair = { client, server };
    pairs.add(pair);
    // The tail of what the client sent, so a needle split across two writes is still found.
    let tail = Buffer.alloc(0);
    let awaitingAnswer = false;
    client.on('data', (chunk: Buffer) => {
      const cut = armed;
      if (cut !== null && !awaitingAnswer) {
        const seen = Buffer.concat([tail, chunk]);
        if (cut.needles.some((needle) => seen.includes(needle))) {
          armed = null;
          if (cut.moment === 'held') {
            // The server keeps its side, to receive the bytes later; the client's side is reset now.
            pairs.delete(pair);
            held = { server, bytes: [chunk] };
            awaitingAnswer = true;
            client.destroy();
            cut.done();
            return;
          }
          if (cut.moment === 'before-commit-sent') {
            destroy(pair);
            if (cut.unreachable === true) {
              refusing = true;
              cutAll();
            }
            cut.done();
            return;
          }
          awaitingAnswer = true;
          server.once('data', () => {
            // The server answers only after it has executed the statement and committed (its output is flushed at
            // the protocol's Sync): this answer is the one the client must not get.
            destroy(pair);
            if (cut.unreachable === true) {
              refusing = true;
              cutAll();
            }
            cut.done();
          });
        }
        const longest = Math.max(...cut.needles.map((needle) => needle.length));
        tail = seen.subarray(Math.max(0, seen.length - longest));
      }
      if (held?.server === server) held.bytes.push(chunk);
      else server.write(chunk);
    });
    server.on('data', (chunk: Buffer) => {
      if (awaitingAnswer) return;
      client.write(chunk);
    });
    // A reset on one side ends the other: the errors are the cuts this proxy makes or the test's own closes.
    const end = () => {
      if (held?.server === server && !server.destroyed && client.destroyed) return;
      destroy(pair);
    };
    client.on('error', end);
    server.on('error', end);
    client.on('close', end);
    server.on('close', end);
  });
  proxy.listen(0, '127.0.0.1');
  await once(proxy, 'listening');
  const address = proxy.address();
  if (address === null || typeof address === 'string') throw new Error('the proxy has no TCP address');
  return {
    connectionString: `postgresql://${user}@127.0.0.1:${address.port}/postgres`,
    armCut(options) {
      return new Promise<void>((resolve) => {
        armed = { ...options, done: resolve };
      });
    },
    async deliverHeld() {
      const delayed = held;
      if (delayed === null) throw new Error('no bytes are held');
      held = null;
      const answered = once(delayed.server, 'data');
      for (const bytes of delayed.bytes) delayed.server.write(bytes);
      await answered;
      delayed.server.destroy();
    },
    reopen() {
      refusing = false;
    },
    async close() {
      cutAll();
      held?.server.destroy();
      proxy.close();
      await once(proxy, 'close');
    },
  };
}
