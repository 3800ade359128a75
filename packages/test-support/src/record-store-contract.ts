import type { JournalItem } from '@turnjournal/reader';
import type { JournalCursor, JournalReader, RecordStore, WritableJournal } from '@turnjournal/reader/record-store';
import type { StoreLocation } from '@turnjournal/reader/store-format';
import { afterEach, describe, expect, it as vitestIt } from 'vitest';

/**
 * A backend under the contract suite. `open` returns a store instance; called twice it returns two instances on the
 * same backing (two processes on one database, or one root), which the channel and ownership checks need.
 */
export interface StoreUnderTest {
  /** A new store instance on the one backing of this test. */
  open(): RecordStore;
  /**
   * Lets another owner take the journal at `location` over, as the expiry of a paused owner's lease would, and
   * returns that owner: the previous owner is fenced (TJ-STORE-008).
   */
  takeOver(store: RecordStore, location: StoreLocation): Promise<WritableJournal>;
  /** Frees what the backing holds; called after each test. */
  dispose(): Promise<void>;
}

const encoder = new TextEncoder();
const line = (value: unknown): Uint8Array => encoder.encode(`${JSON.stringify(value)}\n`);
const event = (seq: number, extra: Record<string, unknown> = {}) =>
  line({
    seq,
    ts: '2026-11-29T00:00:00.000Z',
    type: 'message_append',
    payload: { message: { role: 'user', content: `m${seq}`, ...extra } },
  });
const text = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

async function items(reader: JournalReader, from?: JournalCursor, to?: JournalCursor): Promise<JournalItem[]> {
  const out: JournalItem[] = [];
  const options = { ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) };
  for await (const batch of reader.records(options)) out.push(...batch);
  return out;
}

async function recordLines(reader: JournalReader, from?: JournalCursor): Promise<string[]> {
  return (await items(reader, from)).flatMap((item) =>
    item.kind === 'record' ? [`${text(item.record.bytes)}\n`] : [`finding ${item.finding.code}`],
  );
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return String((error as { code?: unknown }).code);
  }
  return 'resolved';
}

/**
 * The record-store contract (spec §19): the properties every backend of the seam keeps whatever holds its bytes,
 * written once against the seam. Each `it` names the requirement it checks; returns the set of those ids, filled once vitest has collected the suite.
 */
export function describeRecordStoreContract(label: string, setUp: () => Promise<StoreUnderTest>): ReadonlySet<string> {
  const checked = new Set<string>();
  const it = (name: string, test: () => Promise<void>) => {
    for (const id of name.match(/TJ-[A-Z]+-\d{3}/g) ?? []) checked.add(id);
    vitestIt(name, test);
  };
  describe(`record-store contract: ${label}`, () => {
    let backend: StoreUnderTest | undefined;
    const start = async (): Promise<StoreUnderTest> => {
      backend = await setUp();
      return backend;
    };
    afterEach(async () => {
      await backend?.dispose();
      backend = undefined;
    });
    const events = (sessionId: string): StoreLocation => ({ family: 'event', sessionId });

    it('TJ-STORE-004: concurrent appends are acknowledged in call order, each at the cursor its line is read at', async () => {
      const store = (await start()).open();
      for (const durability of ['every', 'group', 'none'] as const) {
        const journal = await store.openJournal(events(`order-${durability}`), { durability });
        const lines = Array.from({ length: 40 }, (_, seq) => event(seq));
        const acks = await Promise.all(lines.map((bytes) => journal.appendLine(bytes)));
        for (let i = 1; i < acks.length; i++)
          expect((acks[i] as { cursor: number }).cursor).toBeGreaterThan((acks[i - 1] as { cursor: number }).cursor);
        const read = await items(journal.reader());
        const records = read.flatMap((item) => (item.kind === 'record' ? [item.record] : []));
        expect(records.map((r) => `${text(r.bytes)}\n`)).toEqual(lines.map(text));
        expect(
          records.map((r) => r.offset),
          'each line is read at the cursor its ack gave',
        ).toEqual(acks.map((a) => a.cursor));
        expect(acks.map((a) => a.length)).toEqual(lines.map((l) => l.length));
        await journal.close();
      }
    });

    it('TJ-STORE-001: one owner per journal; readers take no lock and see what the owner acknowledged', async () => {
      const backing = await start();
      const a = backing.open();
      const b = backing.open();
      expect(await b.ownerHeld(events('owned'))).toBe(false);
      const owner = await a.openJournal(events('owned'), { durability: 'group' });
      expect(await b.ownerHeld(events('owned')), 'another instance sees the owner').toBe(true);
      expect(await codeOf(b.openJournal(events('owned'), { durability: 'group' }))).toBe('journal_locked');
      expect(await codeOf(a.openJournal(events('owned'), { durability: 'group' }))).toBe('journal_locked');
      await owner.appendLine(event(0));
      const reader = await b.openReader(events('owned'));
      expect(await recordLines(reader)).toEqual([text(event(0))]);
      await owner.appendLine(event(1));
      expect(await recordLines(reader), 'a read that starts later sees later lines').toEqual([
        text(event(0)),
        text(event(1)),
      ]);
      await reader.close();
      await owner.close();
      expect(await b.ownerHeld(events('owned')), 'a closed owner holds nothing').toBe(false);
      const next = await b.openJournal(events('owned'), { durability: 'group' });
      await next.appendLine(event(2));
      const all = await b.openReader(events('owned'));
      expect(await recordLines(all), 'the next owner continues after the lines of the last').toHaveLength(3);
      await all.close();
      await next.close();
      expect(await codeOf(a.openReader(events('never-written')))).toBe('not_found');
    });

    it('TJ-STORE-002: a read from any cursor a read gave yields exactly the lines after it, gap-free', async () => {
      const store = (await start()).open();
      const journal = await store.openJournal(events('replay'), { durability: 'group' });
      const lines = Array.from({ length: 30 }, (_, seq) => event(seq, { pad: 'x'.repeat(seq * 37) }));
      for (const bytes of lines) await journal.appendLine(bytes);
      await journal.close();
      const reader = await store.openReader(events('replay'));
      const records = (await items(reader)).flatMap((item) => (item.kind === 'record' ? [item.record] : []));
      expect(records).toHaveLength(30);
      for (const [i, record] of records.entries()) {
        const rest = await recordLines(reader, record.offset);
        expect(rest, `from the cursor of line ${i}`).toEqual(lines.slice(i).map(text));
      }
      expect(await recordLines(reader, await reader.end()), 'nothing after the end').toEqual([]);
      const backward: string[] = [];
      for await (const found of reader.readBackward())
        if (found.kind === 'line') backward.push(`${text(found.bytes)}\n`);
      expect(backward, 'backwards, last first').toEqual(lines.map(text).reverse());
      await reader.close();
    });

    it('TJ-STORE-005: seekSeq gives a cursor before which every record has a smaller seq, never after the target', async () => {
      const store = (await start()).open();
      const journal = await store.openJournal(events('seek'), { durability: 'group' });
      const count = 200;
      for (let seq = 0; seq < count; seq++)
        await journal.appendLine(event(seq, { pad: 'y'.repeat((seq * 7919) % 900) }));
      const reader = journal.reader();
      const records = (await items(reader)).flatMap((item) => (item.kind === 'record' ? [item.record] : []));
      for (const target of [0, 1, 57, 198, 199, 200, 500]) {
        const cursor = await reader.seekSeq(target);
        for (const record of records)
          if (record.offset < cursor) expect(record.value.seq as number).toBeLessThan(target);
        const first = records.find((record) => (record.value.seq as number) >= target);
        if (first !== undefined) expect(cursor, `target ${target}`).toBeLessThanOrEqual(first.offset);
      }
      await journal.close();
    });

    it('TJ-STORE-005: recordsFromSeq, where a reader has it, yields what a read from seekSeq yields', async () => {
      const store = (await start()).open();
      const journal = await store.openJournal(events('seek-read'), { durability: 'group' });
      for (let seq = 0; seq < 300; seq++) await journal.appendLine(event(seq, { pad: 'z'.repeat((seq * 7919) % 700) }));
      const lock = await store.openReader(events('seek-read'));
      for (const reader of [journal.reader(), lock]) {
        if (reader.recordsFromSeq === undefined) continue;
        for (const target of [0, 1, 150, 199, 200, 299, 300, 500]) {
          const read: string[] = [];
          for await (const batch of reader.recordsFromSeq(target))
            for (const item of batch)
              read.push(item.kind === 'record' ? `${text(item.record.bytes)}\n` : `finding ${item.finding.code}`);
          expect(read, `target ${target}`).toEqual(await recordLines(reader, await reader.seekSeq(target)));
        }
      }
      await lock.close();
      await journal.close();
    });

    it('TJ-STORE-003: `none` lines are readable by their owner at once and durable after flush; close keeps them', async () => {
      const backing = await start();
      const store = backing.open();
      const journal = await store.openJournal(events('none'), { durability: 'none' });
      await journal.appendLine(event(0));
      await journal.appendLine(event(1));
      expect(await recordLines(journal.reader())).toHaveLength(2);
      await journal.flush();
      await journal.appendLine(event(2));
      await journal.close();
      const reader = await backing.open().openReader(events('none'));
      expect(await recordLines(reader)).toEqual([0, 1, 2].map((seq) => text(event(seq))));
      await reader.close();
    });

    it('TJ-STORE-004: a closed journal refuses appends with `writer_closed` and appends nothing', async () => {
      const store = (await start()).open();
      const journal = await store.openJournal(events('closed'), { durability: 'group' });
      await journal.appendLine(event(0));
      expect(journal.state).toBe('open');
      await journal.close();
      expect(journal.state).toBe('closed');
      expect(await codeOf(journal.appendLine(event(1)))).toBe('writer_closed');
      expect(await codeOf(journal.appendLine(encoder.encode('two\nlines\n')))).not.toBe('resolved');
      const reader = await store.openReader(events('closed'));
      expect(await recordLines(reader)).toEqual([text(event(0))]);
      await reader.close();
    });

    it('TJ-STORE-004: a line that is not exactly one LF-terminated line is refused and nothing is appended', async () => {
      const store = (await start()).open();
      const journal = await store.openJournal(events('bad-line'), { durability: 'group' });
      expect(await codeOf(journal.appendLine(encoder.encode('{"a":1}')))).toBe('invalid_record');
      expect(await codeOf(journal.appendLine(encoder.encode('{"a":1}\n{"b":2}\n')))).toBe('invalid_record');
      await journal.appendLine(event(0));
      expect(await recordLines(journal.reader())).toEqual([text(event(0))]);
      await journal.close();
    });

    it('TJ-STORE-008: an owner fenced by a takeover appends nothing more, and says so with `journal_fenced`', async () => {
      const backing = await start();
      const a = backing.open();
      const first = await a.openJournal(events('fenced'), { durability: 'group' });
      await first.appendLine(event(0));
      const second = await backing.takeOver(backing.open(), events('fenced'));
      await second.appendLine(event(1));
      const refused = await codeOf(first.appendLine(event(99)));
      expect(refused).toBe('journal_fenced');
      expect(first.state).toBe('fenced');
      expect(await codeOf(first.appendLine(event(100)))).not.toBe('resolved');
      await second.appendLine(event(2));
      await second.close();
      // A fenced owner's close releases what it holds; it may say again why it stopped, never that it appended.
      expect(['resolved', 'journal_fenced', 'writer_poisoned']).toContain(await codeOf(first.close()));
      const reader = await backing.open().openReader(events('fenced'));
      const seqs = (await items(reader)).flatMap((item) => (item.kind === 'record' ? [item.record.value.seq] : []));
      expect(seqs, 'the fenced owner added nothing after the takeover').toEqual([0, 1, 2]);
      await reader.close();
    });

    it('TJ-STORE-006: a rewrite replaces every line at once; appends continue after the new lines', async () => {
      const store = (await start()).open();
      const journal = await store.openJournal(events('rewrite'), { durability: 'group' });
      for (let seq = 0; seq < 10; seq++) await journal.appendLine(event(seq));
      await journal.rewrite([event(8), event(9)]);
      await journal.appendLine(event(10));
      expect(await recordLines(journal.reader())).toEqual([8, 9, 10].map((seq) => text(event(seq))));
      await journal.close();
      const reader = await store.openReader(events('rewrite'));
      expect(await recordLines(reader)).toEqual([8, 9, 10].map((seq) => text(event(seq))));
      await reader.close();
    });

    it('TJ-STORE-006: appends made while a rewrite runs are not lost: they follow the new lines', async () => {
      const store = (await start()).open();
      const journal = await store.openJournal(events('rewrite-race'), { durability: 'group' });
      for (let seq = 0; seq < 20; seq++) await journal.appendLine(event(seq));
      const rewritten = journal.rewrite([event(18), event(19)]);
      const acks = await Promise.all([20, 21, 22].map((seq) => journal.appendLine(event(seq))));
      await rewritten;
      const reader = journal.reader();
      const records = (await items(reader)).flatMap((item) => (item.kind === 'record' ? [item.record] : []));
      expect(records.map((r) => r.value.seq)).toEqual([18, 19, 20, 21, 22]);
      expect(
        records.slice(2).map((r) => r.offset),
        'each ack names where its line is now',
      ).toEqual(acks.map((ack) => ack.cursor));
      await journal.close();
    });

    it('TJ-STORE-006: documents are replaced whole and read back byte for byte', async () => {
      const backing = await start();
      const store = backing.open();
      const location = { family: 'state', sessionId: 'doc' } as const;
      expect(await store.readDocument(location)).toBeUndefined();
      await store.replaceDocument(location, encoder.encode('{"v":1}'));
      await store.replaceDocument(location, encoder.encode('{"v":2,"é":"\u2028"}'));
      const bytes = await backing.open().readDocument(location);
      expect(text(bytes as Uint8Array)).toBe('{"v":2,"é":"\u2028"}');
    });

    it('TJ-STORE-009: list finds every journal and document, by family and by session', async () => {
      const backing = await start();
      const store = backing.open();
      const opened = [
        await store.openJournal(events('s1'), { durability: 'group' }),
        await store.openJournal(events('s2'), { durability: 'group' }),
        await store.openJournal({ family: 'turn', sessionId: 's1' }, { durability: 'group' }),
        await store.openJournal({ family: 'turn', sessionId: 's1', shard: 'p7' }, { durability: 'group' }),
        await store.openJournal(
          { family: 'run', runId: 'r1', date: { year: '2026', month: '11', day: '29' } },
          { durability: 'group' },
        ),
      ];
      for (const journal of opened) await journal.appendLine(event(0));
      await store.replaceDocument({ family: 'state', sessionId: 's1' }, encoder.encode('{}'));
      const found = async (options?: Parameters<RecordStore['list']>[0]) => {
        const out: string[] = [];
        for await (const entry of backing.open().list(options)) out.push(JSON.stringify(entry.location));
        return out.sort();
      };
      expect(await found()).toHaveLength(6);
      expect(await found({ family: 'event' })).toEqual(
        [events('s1'), events('s2')].map((l) => JSON.stringify(l)).sort(),
      );
      expect(await found({ sessionId: 's1' })).toEqual(
        [
          events('s1'),
          { family: 'turn', sessionId: 's1' },
          { family: 'turn', sessionId: 's1', shard: 'p7' },
          { family: 'state', sessionId: 's1' },
        ]
          .map((l) => JSON.stringify(l))
          .sort(),
      );
      for (const journal of opened) await journal.close();
    });

    it('TJ-STORE-007: the channel tells a listener of another instance each durable seq in order, and to re-read when it starts', async () => {
      const backing = await start();
      const owner = backing.open();
      const follower = backing.open();
      expect(await follower.channel.durableSeq('chan')).toBe(-1);
      const heard: (number | undefined)[] = [];
      let wake: (() => void) | undefined;
      const stop = follower.channel.listen('chan', (seq) => {
        heard.push(seq);
        wake?.();
      });
      const until = async (done: () => boolean) => {
        const deadline = Date.now() + 10_000;
        while (!done() && Date.now() < deadline)
          await new Promise<void>((resolve) => {
            wake = resolve;
            setTimeout(resolve, 20);
          });
      };
      await until(() => heard.length > 0);
      expect(heard[0], 'a listener is first told to read the durable end itself').toBeUndefined();
      for (let seq = 0; seq < 5; seq++) await owner.channel.publish('chan', seq);
      await until(() => heard.includes(4));
      const seqs = heard.filter((seq): seq is number => seq !== undefined);
      expect(seqs.at(-1)).toBe(4);
      expect(
        [...seqs].sort((x, y) => x - y),
        'never out of order',
      ).toEqual(seqs);
      expect(new Set(seqs).size, 'never twice').toBe(seqs.length);
      for (const seq of seqs) expect(seq).toBeLessThanOrEqual(4);
      expect(await follower.channel.durableSeq('chan')).toBe(4);
      stop();
      await owner.channel.publish('chan', 5);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(
        heard.filter((seq) => seq === 5),
        'a stopped listener hears nothing',
      ).toEqual([]);
    });
  });
  return checked;
}
