import type { StoreChannel } from '@turnjournal/reader/record-store';
import pg from 'pg';
import { isConnectionLoss, reportCleanupFailure } from './connection-errors.js';

type Listener = (seq: number | undefined) => void;

/** What a listener was last told: announcements at or below it are not delivered again (TJ-STORE-007). */
interface Subscription {
  readonly sessionId: string;
  readonly listener: Listener;
  last: number;
}

/** How long the channel waits before reconnecting its listening connection, at first and at most. */
const RECONNECT_MS = { first: 50, max: 2_000 };

/**
 * The store's channel on PostgreSQL (TJ-STORE-007): `publish` records the durable seq of a session (an UPSERT that
 * only ever raises it) and, in the same statement, so at the same commit, `pg_notify`s `sessionId:seq` on the store's
 * notification channel; `listen` LISTENs on one dedicated connection per store instance, opened while someone
 * listens. Notifications sent while that connection is down are lost: each listener is then told `undefined` and
 * re-reads the durable seq, as it is when it starts.
 */
export class PostgresChannel implements StoreChannel {
  readonly #pool: pg.Pool;
  readonly #config: pg.ClientConfig;
  readonly #store: string;
  /** The notification channel's name: one per store, quoted as an identifier when listened to. */
  readonly #channel: string;
  readonly #subscriptions = new Set<Subscription>();
  #client: pg.Client | null = null;
  #connecting: Promise<void> | null = null;
  #retryMs = RECONNECT_MS.first;
  #retryTimer: NodeJS.Timeout | null = null;
  #closed = false;
  /** Creates the tables on first use, as every other method of the store does. */
  readonly #ready: () => Promise<void>;

  constructor(pool: pg.Pool, config: pg.ClientConfig, store: string, ready: () => Promise<void>) {
    this.#pool = pool;
    this.#ready = ready;
    this.#config = config;
    this.#store = store;
    this.#channel = `turnjournal.${store}`;
  }

  async publish(sessionId: string, seq: number): Promise<void> {
    await this.#ready();
    await this.#pool.query(
      `WITH mark AS (
         INSERT INTO turnjournal_durable (store, session_id, seq) VALUES ($1, $2, $3)
         ON CONFLICT (store, session_id) DO UPDATE SET seq = EXCLUDED.seq WHERE turnjournal_durable.seq < EXCLUDED.seq
         RETURNING seq)
       SELECT pg_notify($4, $2 || ':' || $3) FROM mark`,
      [this.#store, sessionId, seq, this.#channel],
    );
  }

  listen(sessionId: string, listener: Listener): () => void {
    const subscription: Subscription = { sessionId, listener, last: -1 };
    this.#subscriptions.add(subscription);
    if (this.#client !== null && this.#connecting === null)
      queueMicrotask(() => {
        if (this.#subscriptions.has(subscription)) listener(undefined);
      });
    else this.#connect();
    return () => {
      this.#subscriptions.delete(subscription);
      if (this.#subscriptions.size === 0) this.#disconnect();
    };
  }

  async durableSeq(sessionId: string): Promise<number> {
    await this.#ready();
    const { rows } = await this.#pool.query<{ seq: string }>(
      'SELECT seq FROM turnjournal_durable WHERE store = $1 AND session_id = $2',
      [this.#store, sessionId],
    );
    return rows[0] === undefined ? -1 : Number(rows[0].seq);
  }

  /** Nothing to free: announcing for a session holds no connection of its own (each publish is one statement). */
  async release(_sessionId: string): Promise<void> {}

  /** Stops listening for good. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#subscriptions.clear();
    await this.#disconnect();
  }

  /** Opens the listening connection unless it is open or opening; every listener is told `undefined` once it is. */
  #connect(): void {
    if (this.#connecting !== null || this.#client !== null || this.#closed) return;
    const client = new pg.Client(this.#config);
    this.#client = client;
    client.on('notification', (message) => this.#deliver(message));
    // A lost connection: LISTEN again on a new one; what was announced meanwhile is re-read by the listeners.
    const lost = () => {
      if (this.#client !== client) return;
      this.#client = null;
      this.#connecting = null;
      client.end().catch(reportCleanupFailure('ending a lost listening connection'));
      this.#retry();
    };
    client.on('error', lost);
    client.on('end', lost);
    this.#connecting = (async () => {
      try {
        await client.connect();
        await client.query(`LISTEN ${pg.escapeIdentifier(this.#channel)}`);
      } catch (error) {
        // Refused or lost while connecting is what a retry is for; anything else is reported, and retried too, since
        // a listener has no one else to wait for.
        if (!isConnectionLoss(error)) reportCleanupFailure('listening')(error);
        if (this.#client === client) lost();
        return;
      }
      if (this.#client !== client) return;
      this.#connecting = null;
      this.#retryMs = RECONNECT_MS.first;
      for (const subscription of [...this.#subscriptions]) subscription.listener(undefined);
    })();
  }

  #retry(): void {
    if (this.#closed || this.#subscriptions.size === 0 || this.#retryTimer !== null) return;
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = null;
      this.#connect();
    }, this.#retryMs);
    this.#retryTimer.unref();
    this.#retryMs = Math.min(this.#retryMs * 2, RECONNECT_MS.max);
  }

  #deliver(message: pg.Notification): void {
    if (message.channel !== this.#channel || message.payload === undefined) return;
    const colon = message.payload.lastIndexOf(':');
    const sessionId = message.payload.slice(0, colon);
    const seq = Number(message.payload.slice(colon + 1));
    if (colon < 0 || !Number.isSafeInteger(seq)) return;
    for (const subscription of [...this.#subscriptions]) {
      if (subscription.sessionId !== sessionId || seq <= subscription.last) continue;
      subscription.last = seq;
      subscription.listener(seq);
    }
  }

  async #disconnect(): Promise<void> {
    if (this.#retryTimer !== null) clearTimeout(this.#retryTimer);
    this.#retryTimer = null;
    const client = this.#client;
    this.#client = null;
    this.#connecting = null;
    if (client !== null) await client.end().catch(reportCleanupFailure('ending the listening connection'));
  }
}
