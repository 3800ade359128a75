// Sessions appending at once share transactions (issue 36's 64-session figure): the commits of the journals that wait
// while the store's transactions are all in flight go together in the next one, each journal with its own owner check
// (TJ-STORE-028). What one journal's check or failure says is its own: the others' lines commit.

import type { WritableJournal } from '@turnjournal/reader/record-store';
import { describe, expect, it } from 'vitest';
import type { PostgresRecordStore } from '../src/index.js';
import { useThrowawayDatabase } from './support/throwaway-database.js';

const database = useThrowawayDatabase();

const encoder = new TextEncoder();
const event = (seq: number, text: string) =>
  encoder.encode(
    `${JSON.stringify({ seq, ts: '2026-11-29T00:00:00.000Z', type: 'message_append', payload: { text } })}\n`,
  );

/** A store whose commits run one transaction at a time, and three journals of it, each with one line committed. */
async function threeJournals(name: string): Promise<{ store: PostgresRecordStore; journals: WritableJournal[] }> {
  const store = database.open({ store: name, maxConcurrentCommits: 1 });
  const journals = await Promise.all(
    ['s0', 's1', 's2'].map((sessionId) => store.openJournal({ family: 'event', sessionId }, { durability: 'group' })),
  );
  for (const [i, journal] of journals.entries()) await journal.appendLine(event(0, `first of s${i}`));
  return { store, journals };
}

/** Each stream's lines with the transaction that inserted them (`xmin`), in order. */
async function rows(store: string): Promise<{ stream: string; text: string; xmin: string }[]> {
  const result = await database.admin.query<{ stream: string; line: Buffer; xmin: string }>(
    'SELECT stream, line, xmin::text AS xmin FROM turnjournal_lines WHERE store = $1 ORDER BY stream, position',
    [store],
  );
  return result.rows.map((row) => ({
    stream: row.stream,
    text: (JSON.parse(row.line.toString()) as { payload?: { text: string } }).payload?.text ?? '',
    xmin: row.xmin,
  }));
}

async function outcome(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'acknowledged';
  } catch (error) {
    return String((error as { code?: unknown }).code);
  }
}

describe('TJ-STORE-028: journals appending at once share transactions, each checked on its own', () => {
  it('the commits that wait while one is in flight go in one transaction, every line once and in order', async () => {
    const { journals } = await threeJournals('shared');
    // One tick: s0's commit starts at once (nothing in flight); s1's and s2's wait for it, then go together.
    const appends = journals.map((journal, i) => journal.appendLine(event(1, `second of s${i}`)));
    expect(await Promise.all(appends.map(outcome))).toEqual(['acknowledged', 'acknowledged', 'acknowledged']);
    const second = (await rows('shared')).filter((row) => row.text.startsWith('second'));
    expect(second.map((row) => row.text)).toEqual(['second of s0', 'second of s1', 'second of s2']);
    const [s0, s1, s2] = second.map((row) => row.xmin);
    expect(s1, 's1 and s2 in one transaction').toBe(s2);
    expect(s0, 's0 in one of its own').not.toBe(s1);
    for (const journal of journals) await journal.close();
  });

  it('a fenced journal in a shared transaction adds nothing and is refused; the others commit', async () => {
    const { journals } = await threeJournals('fenced');
    // Another owner took s1 over (its open bumped the epoch); this owner has not noticed yet.
    await database.admin.query(
      "UPDATE turnjournal_streams SET epoch = epoch + 1 WHERE store = 'fenced' AND stream = 's1/events.jsonl'",
    );
    const appends = journals.map((journal, i) => journal.appendLine(event(1, `second of s${i}`)));
    expect(await Promise.all(appends.map(outcome))).toEqual(['acknowledged', 'journal_fenced', 'acknowledged']);
    const second = (await rows('fenced')).filter((row) => row.text.startsWith('second'));
    expect(second.map((row) => row.text)).toEqual(['second of s0', 'second of s2']);
    expect(journals.map((journal) => journal.state)).toEqual(['open', 'fenced', 'open']);
  });

  it('a shared transaction that one journal makes fail is retried journal by journal: the others commit', async () => {
    const { journals } = await threeJournals('failing');
    // A row where s1's next line goes, which no owner added (its stream row does not count it): s1's insert violates
    // the unique cursor, and so the whole shared statement fails.
    await database.admin.query(
      `INSERT INTO turnjournal_lines (store, stream, position, start, line)
       SELECT store, stream, line_count, end_cursor, '\\x7b7d0a'::bytea FROM turnjournal_streams
        WHERE store = 'failing' AND stream = 's1/events.jsonl'`,
    );
    const appends = journals.map((journal, i) => journal.appendLine(event(1, `second of s${i}`)));
    const [s0, s1, s2] = await Promise.all(appends.map(outcome));
    expect([s0, s2], 's0 alone, s2 retried alone').toEqual(['acknowledged', 'acknowledged']);
    expect(s1, 's1 is refused').not.toBe('acknowledged');
    const texts = (await rows('failing')).map((row) => `${row.stream} ${row.text}`);
    expect(texts.filter((text) => text.includes('second'))).toEqual([
      's0/events.jsonl second of s0',
      's2/events.jsonl second of s2',
    ]);
  });
});
