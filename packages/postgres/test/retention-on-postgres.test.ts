// Retention on a PostgreSQL store shared by two hosts (issue 36): a prune reads a session's journals, then rewrites
// them. Between the two, another host can take a journal over and append (host A's lock connection was dropped by the
// server while A had not noticed yet: a pause, a partition). The rewrite is one transaction that checks, before any
// line changes, that the journal is still A's and still ends where A read it (TJ-STORE-027): it then changes nothing,
// and host B's line stays. The database's state another host leaves is written here with the statements its open and
// its commit run, as TJ-STORE-021's test does.
import type { RecordStore, WritableJournal } from '@turnjournal/reader/record-store';
import { openTurnJournal, sweepTurnJournals } from '@turnjournal/writer';
import { describe, expect, it } from 'vitest';
import type { PostgresRecordStore } from '../src/index.js';
import { useThrowawayDatabase } from './support/throwaway-database.js';

const DAY_MS = 86_400_000;
const STREAM = '_turn_journal/sess~host-a.jsonl';

const database = useThrowawayDatabase();

const openStore = (store: string): PostgresRecordStore => database.open({ store });

/** Two turns answered three days ago (by the database's clock): both are due for pruning with a one-day window. */
async function answeredLongAgo(store: PostgresRecordStore): Promise<void> {
  await store.setup();
  const old = () => store.clock() - 3 * DAY_MS;
  const turns = await openTurnJournal({ store, sessionId: 'sess', shard: 'host-a', clock: old });
  for (const turnId of ['t-1', 't-2']) {
    await turns.submit({ content: `question ${turnId}`, turnId });
    await turns.complete(turnId);
  }
  await turns.close();
}

/** The journal's lines, in order, from the table. */
async function linesOf(store: string): Promise<string[]> {
  const { rows } = await database.admin.query<{ line: Buffer }>(
    'SELECT line FROM turnjournal_lines WHERE store = $1 AND stream = $2 ORDER BY position',
    [store, STREAM],
  );
  return rows.map((row) => row.line.toString('utf8'));
}

/**
 * `store` as host A: every journal it opens runs `meanwhile` once, just before its first rewrite (after the sweep
 * read it and decided what to drop).
 */
function withInterleaving(store: RecordStore, meanwhile: () => Promise<void>): RecordStore {
  let done = false;
  return {
    ...store,
    async openJournal(location, options) {
      const journal = await store.openJournal(location, options);
      return new Proxy(journal, {
        get(target, property) {
          if (property === 'rewrite')
            return async (lines: Parameters<WritableJournal['rewrite']>[0]) => {
              if (!done) {
                done = true;
                await meanwhile();
              }
              return target.rewrite(lines);
            };
          const value = Reflect.get(target, property, target);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
    },
  };
}

/** What host B's commit of one line does: its epoch is the journal's, and the line goes where the journal ends. */
async function appendAsB(store: string, line: string): Promise<void> {
  const bytes = Buffer.from(`${line}\n`);
  await database.admin.query(
    `WITH s AS (
       UPDATE turnjournal_streams SET end_cursor = end_cursor + $3, line_count = line_count + 1
        WHERE store = $1 AND stream = $2
       RETURNING end_cursor - $3 AS start, line_count - 1 AS position)
     INSERT INTO turnjournal_lines (store, stream, position, start, line) SELECT $1, $2, position, start, $4 FROM s`,
    [store, STREAM, bytes.length, bytes],
  );
}

/** The codes of a sweep's failure: its own, or each of an AggregateError's (a failed rewrite, then a failed close). */
function codesOf(outcome: { swept: unknown } | { error: unknown }): unknown {
  if (!('error' in outcome)) return outcome.swept;
  const { error } = outcome;
  const all = error instanceof AggregateError ? error.errors : [error];
  return [...new Set(all.map((one) => (one as { code?: unknown }).code))];
}

const submittedByB = (store: PostgresRecordStore) =>
  JSON.stringify({
    version: 1,
    event: 'submitted',
    turn_id: 't-b',
    session_id: 'sess',
    created_at: store.clock() / 1000,
    content: 'asked on host B',
  });

describe('TJ-STORE-027: a prune is one transaction that checks its owner and its end', () => {
  it('a sweep whose journal another host took over and appended to meanwhile changes nothing; the line stays', async () => {
    const store = openStore('taken-over');
    await answeredLongAgo(store);
    const before = await linesOf('taken-over');
    const lineOfB = submittedByB(store);
    const hostA = withInterleaving(store, async () => {
      // Host B's open bumps the epoch (the server dropped A's lock connection; A has not seen it yet), then B appends.
      await database.admin.query('UPDATE turnjournal_streams SET epoch = epoch + 1 WHERE store = $1 AND stream = $2', [
        'taken-over',
        STREAM,
      ]);
      await appendAsB('taken-over', lineOfB);
    });
    const report = await sweepTurnJournals(hostA, { retentionSeconds: 86_400, clock: store.clock }).then(
      (swept) => ({ swept }),
      (error: unknown) => ({ error }),
    );
    expect(codesOf(report), 'the rewrite is refused as fenced').toEqual(['journal_fenced']);
    expect(await linesOf('taken-over'), 'every line kept, host B’s included').toEqual([...before, `${lineOfB}\n`]);
  });

  it('a rewrite of a journal whose end moved under its owner (same epoch) changes nothing, and poisons the owner', async () => {
    const store = openStore('moved');
    await answeredLongAgo(store);
    const before = await linesOf('moved');
    const stray = submittedByB(store);
    // A line that no owner's commit added: a binding that skips the epoch check, an operator's INSERT.
    const hostA = withInterleaving(store, () => appendAsB('moved', stray));
    const report = await sweepTurnJournals(hostA, { retentionSeconds: 86_400, clock: store.clock }).then(
      (swept) => ({ swept }),
      (error: unknown) => ({ error }),
    );
    // The sweep fails (its rewrite refused, then the poisoned journal's close), and says so.
    expect(codesOf(report), 'the rewrite is refused, its owner poisoned').toEqual(['writer_poisoned']);
    expect(await linesOf('moved'), 'every line kept, the stray one included').toEqual([...before, `${stray}\n`]);
  });

  it('without interference, the same sweep prunes both turns in one rewrite (the control)', async () => {
    const store = openStore('control');
    await answeredLongAgo(store);
    const swept = await sweepTurnJournals(store, { retentionSeconds: 86_400, clock: store.clock });
    expect(swept.sessions.map((session) => [session.sessionId, session.prunedTurnIds])).toEqual([
      ['sess', ['t-1', 't-2']],
    ]);
    const lines = await linesOf('control');
    expect(lines.map((line) => (JSON.parse(line) as { event: string }).event)).toEqual(['compacted']);
  });
});
