// TJ-STORE-025: a commit whose connection is lost is resolved by re-reading the journal, and only then; when even the
// re-read is impossible, the append says its outcome is unknown. Real lost connections: a TCP proxy this file starts
// in front of the test server cuts the connection that carries one chosen line, at a chosen moment.

import { type PostgresServer, startPostgres } from '@turnjournal/test-support/postgres-server';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresRecordStore, type PostgresRecordStore } from '../src/index.js';
import { type CutMoment, type CuttingProxy, startCuttingProxy } from './support/cutting-proxy.js';

let server: PostgresServer;
let proxy: CuttingProxy;
let admin: pg.Pool;
/** What to close at the end: each store, then the pool it was given. */
const toClose: (() => Promise<void>)[] = [];
beforeAll(async () => {
  server = startPostgres();
  proxy = await startCuttingProxy(server.socketDir, server.user);
  admin = new pg.Pool({ connectionString: server.connectionString, max: 2 });
});
const unexpected: Error[] = [];
afterEach(() => {
  proxy.reopen();
  expect(unexpected.splice(0)).toEqual([]);
});
afterAll(async () => {
  for (const close of toClose) await close();
  await admin?.end();
  await proxy?.close();
  server?.stop();
});

let count = 0;
/** A store reached through the proxy. Its pool keeps no idle connection, so a cut one is never handed out again. */
function storeThroughProxy(): PostgresRecordStore {
  const pool = new pg.Pool({ connectionString: proxy.connectionString, idleTimeoutMillis: 1 });
  // The connections the proxy cuts while idle in the pool are the test's own doing; anything else is kept and failed.
  pool.on('error', (error) => {
    if (!/ECONNRESET|Connection terminated/.test(`${(error as { code?: string }).code} ${error.message}`))
      unexpected.push(error);
  });
  const store = openPostgresRecordStore({ pool, store: `outcome-${++count}` });
  toClose.push(
    () => store.close(),
    () => pool.end(),
  );
  return store;
}

const encoder = new TextEncoder();
const event = (seq: number, text = `m${seq}`) =>
  encoder.encode(
    `${JSON.stringify({ seq, ts: '2026-11-29T00:00:00.000Z', type: 'message_append', payload: { text } })}\n`,
  );
/** What the proxy looks for: the line as node-postgres sends it in a `bytea[]` parameter (hex), or raw. */
const needlesOf = (line: Uint8Array) => [Buffer.from(line), Buffer.from(Buffer.from(line).toString('hex'))];

/** The lines of `sessionId`'s event log in `store`, read over the test's own connection (not through the proxy). */
async function linesOf(store: PostgresRecordStore, sessionId: string): Promise<string[]> {
  const { rows } = await admin.query<{ line: Buffer }>(
    'SELECT line FROM turnjournal_lines WHERE store = $1 AND stream = $2 ORDER BY position',
    [store.store, `${sessionId}/events.jsonl`],
  );
  return rows.map((row) => row.line.toString());
}
const text = (...lines: Uint8Array[]) => lines.map((line) => Buffer.from(line).toString());

/** Waits until the server has freed the lock of a journal whose lock connection was cut. */
async function untilUnlocked(store: PostgresRecordStore, sessionId: string): Promise<void> {
  for (const deadline = Date.now() + 30_000; await store.ownerHeld({ family: 'event', sessionId }); ) {
    if (Date.now() > deadline) throw new Error(`${sessionId}: the cut lock connection still holds the journal`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The acknowledgement, or the code of the refusal. */
function settled<T>(promise: Promise<T>): Promise<T | string> {
  return promise.catch((error: unknown) => String((error as { code?: unknown }).code));
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return String((error as { code?: unknown }).code);
  }
  return 'resolved';
}

/** Opens a journal through the proxy, appends line 0, then appends line 1 while the proxy cuts its commit. */
async function cutSecondAppend(sessionId: string, moment: CutMoment, unreachable: boolean) {
  const store = storeThroughProxy();
  const journal = await store.openJournal({ family: 'event', sessionId }, { durability: 'group' });
  await journal.appendLine(event(0));
  const cut = proxy.armCut({ needles: needlesOf(event(1)), moment, unreachable });
  // Each outcome is taken at once (a refusal may come long before the test looks at it).
  const cutAppend = settled(journal.appendLine(event(1)));
  await cut;
  // Queued behind the commit that is cut: its outcome decides this one's.
  const behind = settled(journal.appendLine(event(2)));
  return { store, journal, cutAppend, behind };
}

describe('TJ-STORE-025: the outcome of a commit whose connection was lost', () => {
  it('COMMIT sent, answer lost: the re-read finds the line committed, acknowledges it, and the journal goes on', async () => {
    const { store, journal, cutAppend, behind } = await cutSecondAppend('landed', 'after-commit-sent', false);
    expect(await cutAppend).toEqual({ cursor: event(0).length, length: event(1).length });
    expect(await behind).toEqual({ cursor: event(0).length + event(1).length, length: event(2).length });
    expect(journal.state).toBe('open');
    await journal.appendLine(event(3));
    expect(await linesOf(store, 'landed'), 'each line once, in order').toEqual(
      text(event(0), event(1), event(2), event(3)),
    );
    await journal.close();
  });

  it('connection lost before COMMIT reached the server: refused as not written, the journal resumes after it', async () => {
    const { store, journal, cutAppend, behind } = await cutSecondAppend('lost', 'before-commit-sent', false);
    expect(await cutAppend).toBe('write_failed');
    expect(await behind).toBe('append_cancelled');
    expect(await linesOf(store, 'lost')).toEqual(text(event(0)));
    journal.resume();
    expect(await journal.appendLine(event(1))).toEqual({ cursor: event(0).length, length: event(1).length });
    expect(await linesOf(store, 'lost')).toEqual(text(event(0), event(1)));
    await journal.close();
  });

  it('a lost statement the server runs after the re-read adds nothing: the re-read took a new epoch', async () => {
    const { store, journal, cutAppend, behind } = await cutSecondAppend('late', 'held', false);
    expect(await cutAppend).toBe('write_failed');
    expect(await behind).toBe('append_cancelled');
    // The statement reaches the server now, after the owner decided it was not committed.
    await proxy.deliverHeld();
    expect(await linesOf(store, 'late'), 'a line refused as not written is not there').toEqual(text(event(0)));
    journal.resume();
    await journal.appendLine(event(1));
    expect(await linesOf(store, 'late')).toEqual(text(event(0), event(1)));
    await journal.close();
  });

  it('COMMIT sent, then the database unreachable: `commit_outcome_unknown`, and the line that is there is not called failed', async () => {
    const { store, journal, cutAppend, behind } = await cutSecondAppend('unknown', 'after-commit-sent', true);
    expect(await cutAppend).toBe('commit_outcome_unknown');
    expect(['journal_fenced', 'writer_poisoned', 'commit_outcome_unknown']).toContain(await behind);
    expect(['fenced', 'poisoned']).toContain(journal.state);
    expect(await codeOf(journal.appendLine(event(3))), 'nothing more is appended after an unknown outcome').not.toBe(
      'resolved',
    );
    proxy.reopen();
    // The line is there once: a reopen sees it and appends after it.
    expect(await linesOf(store, 'unknown')).toEqual(text(event(0), event(1)));
    // Fenced (its lock connection was cut too) or poisoned: either way a close that ends nothing more.
    await codeOf(journal.close());
    await untilUnlocked(store, 'unknown');
    const reopened = await store.openJournal({ family: 'event', sessionId: 'unknown' }, { durability: 'group' });
    expect(await reopened.appendLine(event(2))).toEqual({
      cursor: event(0).length + event(1).length,
      length: event(2).length,
    });
    await reopened.close();
    expect(await linesOf(store, 'unknown')).toEqual(text(event(0), event(1), event(2)));
  });

  it('connection lost before COMMIT reached the server, database unreachable: unknown too, and nothing is there', async () => {
    const { store, journal, cutAppend, behind } = await cutSecondAppend('never', 'before-commit-sent', true);
    expect(await cutAppend).toBe('commit_outcome_unknown');
    expect(['journal_fenced', 'writer_poisoned', 'commit_outcome_unknown']).toContain(await behind);
    proxy.reopen();
    expect(await linesOf(store, 'never')).toEqual(text(event(0)));
    await codeOf(journal.close());
  });
});
