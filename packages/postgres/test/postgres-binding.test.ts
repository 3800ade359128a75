// The PostgreSQL binding's own rules (spec §19.4), on a real server this file starts: what the contract suite cannot
// see from the seam (the rows, the transactions, the fencing epoch checked inside each commit, the channel's
// reconnection).
import type { JournalReader } from '@turnjournal/reader/record-store';
import { describe, expect, it } from 'vitest';
import type { PostgresRecordStore } from '../src/index.js';
import { useThrowawayDatabase } from './support/throwaway-database.js';

const database = useThrowawayDatabase();

let count = 0;
function newStore(): PostgresRecordStore {
  return database.open({ store: `binding-${++count}` });
}

const encoder = new TextEncoder();
const event = (seq: number, text = `m${seq}`) =>
  encoder.encode(
    `${JSON.stringify({ seq, ts: '2026-11-29T00:00:00.000Z', type: 'message_append', payload: { text } })}\n`,
  );

async function rowsOf(store: PostgresRecordStore, stream: string) {
  const { rows } = await database.admin.query<{ line: Buffer; start: string; position: string }>(
    'SELECT line, start, position FROM turnjournal_lines WHERE store = $1 AND stream = $2 ORDER BY position',
    [store.store, stream],
  );
  return rows;
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return String((error as { code?: unknown }).code);
  }
  return 'resolved';
}

/** The next transaction id the server will assign: every commit that writes takes one. */
async function nextXid(): Promise<number> {
  const { rows } = await database.admin.query<{ xid: string }>('SELECT pg_snapshot_xmax(pg_current_snapshot()) AS xid');
  return Number(rows[0]?.xid);
}

async function allBytes(reader: JournalReader): Promise<Buffer> {
  const end = await reader.end();
  const buffer = new Uint8Array(end);
  let at = 0;
  while (at < end) {
    const read = await reader.read(buffer, at, end - at, at);
    if (read === 0) break;
    at += read;
  }
  return Buffer.from(buffer.subarray(0, at));
}

describe('the PostgreSQL binding (spec §19.4)', () => {
  it("TJ-STORE-020: each row holds its line's exact bytes and starts where the lines before it end, damaged lines included", async () => {
    const store = newStore();
    const journal = await store.openJournal({ family: 'event', sessionId: 'bytes' }, { durability: 'group' });
    const lines = [
      event(0),
      // Invalid UTF-8, a NUL and a lone surrogate's bytes: kept as they are, found by the reader, not by the store.
      Uint8Array.from([0x7b, 0xff, 0xfe, 0x00, 0xed, 0xa0, 0x80, 0x7d, 0x0a]),
      encoder.encode('{"seq":1,"type":"a\\u0000b","ts":"x"}\n'),
      event(2, 'é\u2028'),
    ];
    for (const line of lines) await journal.appendLine(line);
    const rows = await rowsOf(store, 'bytes/events.jsonl');
    expect(rows.map((row) => [...row.line])).toEqual(lines.map((line) => [...line]));
    let cursor = 0;
    for (const [i, row] of rows.entries()) {
      expect([Number(row.position), Number(row.start)]).toEqual([i, cursor]);
      cursor += row.line.length;
    }
    const other = database.open({ store: store.store });
    const reader = await other.openReader({ family: 'event', sessionId: 'bytes' });
    expect(await reader.end()).toBe(cursor);
    expect([...(await allBytes(reader))]).toEqual([...Buffer.concat(lines)]);
    const findings: string[] = [];
    for await (const batch of reader.records())
      for (const item of batch) if (item.kind === 'finding') findings.push(item.finding.code);
    expect(findings.length, 'the damaged line is the reader’s finding').toBeGreaterThan(0);
    await journal.close();
  });

  it('TJ-STORE-021: an owner whose epoch another owner bumped is refused inside its commit and adds nothing', async () => {
    const store = newStore();
    const journal = await store.openJournal({ family: 'event', sessionId: 'epoch' }, { durability: 'group' });
    await journal.appendLine(event(0));
    // What a second owner's open does, while this one still believes it holds the journal (its lock connection is
    // alive: a paused process, or a partition that only the database side has noticed).
    await database.admin.query(
      "UPDATE turnjournal_streams SET epoch = epoch + 1 WHERE store = $1 AND stream = 'epoch/events.jsonl'",
      [store.store],
    );
    expect(await codeOf(journal.appendLine(event(1)))).toBe('journal_fenced');
    expect(journal.state).toBe('fenced');
    expect(await codeOf(journal.appendLine(event(2)))).toBe('journal_fenced');
    expect((await rowsOf(store, 'epoch/events.jsonl')).map((row) => row.line.toString())).toEqual([
      Buffer.from(event(0)).toString(),
    ]);
    await journal.close();
  });

  it('TJ-STORE-022: `group` appends made while a commit is in flight share the next transaction; `every` commits each', async () => {
    const store = newStore();
    const appendsOf = async (durability: 'group' | 'every') => {
      const journal = await store.openJournal({ family: 'event', sessionId: durability }, { durability });
      const before = await nextXid();
      const acks = await Promise.all(Array.from({ length: 40 }, (_, seq) => journal.appendLine(event(seq))));
      const transactions = (await nextXid()) - before;
      // Each acknowledged line is committed: another connection sees it at once.
      expect(await rowsOf(store, `${durability}/events.jsonl`)).toHaveLength(acks.length);
      await journal.close();
      return transactions;
    };
    expect(await appendsOf('every')).toBeGreaterThanOrEqual(40);
    expect(await appendsOf('group')).toBeLessThanOrEqual(20);
  });

  it('TJ-STORE-023: a failed commit refuses the appends queued behind it and appends nothing until the owner resumes', async () => {
    const store = newStore();
    const journal = await store.openJournal({ family: 'event', sessionId: 'fail' }, { durability: 'group' });
    await journal.appendLine(event(0));
    // The database refuses one line (a trigger standing in for a constraint, a full disk, a killed statement).
    await database.admin.query(`CREATE OR REPLACE FUNCTION refuse_boom() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'refused by the test'; END $$`);
    await database.admin.query(`CREATE TRIGGER refuse_boom BEFORE INSERT ON turnjournal_lines FOR EACH ROW
      WHEN (position('boom' in encode(NEW.line, 'escape')) > 0) EXECUTE FUNCTION refuse_boom()`);
    try {
      const failed = journal.appendLine(event(1, 'boom'));
      const behind = [journal.appendLine(event(2)), journal.appendLine(event(3))];
      expect(await codeOf(failed)).toBe('write_failed');
      expect(await Promise.all(behind.map(codeOf))).toEqual(['append_cancelled', 'append_cancelled']);
      expect(journal.interrupted).toBe(true);
      expect(await codeOf(journal.appendLine(event(1))), 'refused until the owner re-read').toBe('append_cancelled');
      journal.resume();
      const ack = await journal.appendLine(event(1));
      expect(ack.cursor, 'the next line starts where the last committed one ends').toBe(event(0).length);
      expect((await rowsOf(store, 'fail/events.jsonl')).map((row) => row.line.toString())).toEqual(
        [event(0), event(1)].map((line) => Buffer.from(line).toString()),
      );
    } finally {
      await database.admin.query('DROP TRIGGER refuse_boom ON turnjournal_lines');
    }
    await journal.close();
  });

  it('TJ-STORE-003: `none` lines held are committed by the next append not held, a flush or close; a lost one poisons', async () => {
    const store = newStore();
    const journal = await store.openJournal({ family: 'event', sessionId: 'none' }, { durability: 'none' });
    const committed = async () => (await rowsOf(store, 'none/events.jsonl')).length;
    for (let seq = 0; seq < 3; seq++) await journal.appendLine(event(seq), { hold: true });
    // Long enough for a commit started by a held append to have ended (a few milliseconds here).
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await committed(), 'held lines wait in memory').toBe(0);
    await journal.appendLine(event(3));
    await journal.idle();
    expect(await committed(), 'an append not held commits what waits with it').toBe(4);
    await journal.appendLine(event(4), { hold: true });
    await journal.flush();
    expect(await committed()).toBe(5);
    // A commit of acknowledged lines fails: the owner's state no longer matches the journal, only a reopen helps.
    await database.admin.query(`CREATE OR REPLACE FUNCTION refuse_boom() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'refused by the test'; END $$`);
    await database.admin.query(`CREATE TRIGGER refuse_boom_none BEFORE INSERT ON turnjournal_lines FOR EACH ROW
      WHEN (position('boom' in encode(NEW.line, 'escape')) > 0) EXECUTE FUNCTION refuse_boom()`);
    try {
      await journal.appendLine(event(5, 'boom'), { hold: true });
      expect(await codeOf(journal.flush())).toBe('writer_poisoned');
      expect(journal.state).toBe('poisoned');
      expect(await codeOf(journal.appendLine(event(6)))).toBe('writer_poisoned');
    } finally {
      await database.admin.query('DROP TRIGGER refuse_boom_none ON turnjournal_lines');
    }
    expect(await committed()).toBe(5);
    expect(await codeOf(journal.close()), 'close says the acknowledged line is lost').toBe('writer_poisoned');
    const reopened = await store.openJournal({ family: 'event', sessionId: 'none' }, { durability: 'none' });
    await reopened.appendLine(event(5), { hold: true });
    await reopened.close();
    expect(await committed(), 'close commits what is held').toBe(6);
  });

  it('TJ-STORE-006: appends made during a rewrite wait for it and follow the new lines, in call order', async () => {
    const store = newStore();
    const journal = await store.openJournal({ family: 'event', sessionId: 'rewrite' }, { durability: 'group' });
    for (let seq = 0; seq < 20; seq++) await journal.appendLine(event(seq));
    const rewritten = journal.rewrite([event(18), event(19)]);
    const during = [20, 21, 22].map((seq) => journal.appendLine(event(seq)));
    await rewritten;
    // One more made once the rewrite ended, before the waiting appends have resumed: it comes after them.
    during.push(journal.appendLine(event(23)));
    const acks = await Promise.all(during);
    const expected = [18, 19, 20, 21, 22, 23].map((seq) => Buffer.from(event(seq)).toString());
    const rows = await rowsOf(store, 'rewrite/events.jsonl');
    expect(rows.map((row) => row.line.toString())).toEqual(expected);
    expect(acks.map((ack) => ack.cursor)).toEqual(rows.slice(2).map((row) => Number(row.start)));
    await journal.close();
  });

  it('TJ-STORE-024: a listener whose connection was lost is told to re-read, and hears later announcements', async () => {
    const owner = newStore();
    const follower = database.open({ store: owner.store });
    const heard: (number | undefined)[] = [];
    const stop = follower.channel.listen('s', (seq) => heard.push(seq));
    const until = async (what: string, done: () => boolean) => {
      for (const deadline = Date.now() + 10_000; !done(); await new Promise((resolve) => setTimeout(resolve, 10)))
        if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}; heard ${JSON.stringify(heard)}`);
    };
    await until('the listener is told to read the durable end', () => heard.length === 1);
    await owner.channel.publish('s', 0);
    await until('0 is heard', () => heard.includes(0));
    const { rowCount } = await database.admin.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN %' AND pid <> pg_backend_pid()",
    );
    expect(rowCount).toBe(1);
    await until('the listener is told again', () => heard.filter((seq) => seq === undefined).length === 2);
    await owner.channel.publish('s', 1);
    await until('1 is heard', () => heard.includes(1));
    expect(heard).toEqual([undefined, 0, undefined, 1]);
    expect(await follower.channel.durableSeq('s')).toBe(1);
    stop();
  });
});
