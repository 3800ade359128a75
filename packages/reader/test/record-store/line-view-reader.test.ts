import { propertyParameters } from '@turnjournal/test-support';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { JournalItem } from '../../src/framing/read-journal.js';
import { type LineView, LineViewReader } from '../../src/record-store/line-view-reader.js';

/** A line view over `content` that counts its asynchronous reads and, when `now`, has a counted `readNow` too. */
function viewOf(content: Buffer, now: boolean): LineView & { reads: number; readsNow: number } {
  const copy = (buffer: Uint8Array, offset: number, length: number, position: number) => {
    const n = Math.max(0, Math.min(length, content.length - position));
    buffer.set(content.subarray(position, position + n), offset);
    return n;
  };
  const view = {
    reads: 0,
    readsNow: 0,
    read: async (buffer: Uint8Array, offset: number, length: number, position: number) => {
      view.reads += 1;
      return copy(buffer, offset, length, position);
    },
    end: async () => content.length,
    close: async () => undefined,
    ...(now
      ? {
          readNow: (buffer: Uint8Array, offset: number, length: number, position: number) => {
            view.readsNow += 1;
            return copy(buffer, offset, length, position);
          },
        }
      : {}),
  };
  return view;
}

type Piece =
  | { readonly kind: 'record'; readonly pad: number }
  | { readonly kind: 'garbage'; readonly length: number }
  | { readonly kind: 'long'; readonly length: number };

/** Event records with seqs 0, 1, 2 … padded to random lengths, damaged lines and long lines between them, NULs after. */
function logOf(pieces: readonly Piece[], space: number): { content: Buffer; records: number } {
  const parts: Buffer[] = [];
  let seq = 0;
  for (const piece of pieces) {
    const pad = piece.kind === 'record' ? piece.pad : piece.length;
    const text =
      piece.kind === 'garbage'
        ? `${'{"seq":'.repeat(piece.length)}\n`
        : `${JSON.stringify({ seq: seq++, ts: '2026-11-26T00:00:00.000Z', type: 'x.test.pad', payload: { p: 'y'.repeat(pad) } })}\n`;
    parts.push(Buffer.from(text));
  }
  parts.push(Buffer.alloc(space));
  return { content: Buffer.concat(parts), records: seq };
}

async function collect(items: AsyncGenerator<JournalItem[]>): Promise<JournalItem[]> {
  const all: JournalItem[] = [];
  for await (const batch of items) all.push(...batch);
  return all;
}

/** `value` with every byte array as hex: reads that begin at other places hand out Buffers or plain Uint8Arrays. */
function bytesAsHex(value: unknown): unknown {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('hex');
  if (Array.isArray(value)) return value.map(bytesAsHex);
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, bytesAsHex(item)]));
  return value;
}

const piece: fc.Arbitrary<Piece> = fc.oneof(
  { weight: 20, arbitrary: fc.record({ kind: fc.constant('record' as const), pad: fc.integer({ min: 0, max: 600 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('garbage' as const), length: fc.integer({ min: 1, max: 50 }) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('long' as const), length: fc.integer({ min: 4000, max: 70_000 }) }),
  },
);

describe('LineViewReader.recordsFromSeq (TJ-STORE-005)', () => {
  it('yields what records() yields from seekSeq, with and without a readNow', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(piece, { minLength: 0, maxLength: 1500, size: 'max' }),
        fc.integer({ min: 0, max: 64 * 1024 }),
        fc.double({ min: 0, max: 1.1, noNaN: true }),
        fc.boolean(),
        async (pieces, space, where, now) => {
          const { content, records } = logOf(pieces, space);
          const target = Math.floor(where * (records + 1));
          const reader = new LineViewReader('log', viewOf(content, now));
          const expected = await collect(reader.records({ from: await reader.seekSeq(target) }));
          expect(bytesAsHex(await collect(reader.recordsFromSeq(target)))).toEqual(bytesAsHex(expected));
        },
      ),
      propertyParameters({ defaultRuns: 50 }),
    );
  });

  it("serves a target near the end from the seek's one read, made at once where the view has readNow", async () => {
    const { content, records } = logOf(
      Array.from({ length: 50_000 }, () => ({ kind: 'record', pad: 200 })),
      32 * 1024,
    );
    const seqs = async (items: AsyncGenerator<JournalItem[]>) =>
      (await collect(items)).flatMap((item) => (item.kind === 'record' ? [item.record.value.seq] : []));
    const wanted = Array.from({ length: 100 }, (_, i) => records - 100 + i);

    const twice = viewOf(content, false);
    const apart = new LineViewReader('log', twice);
    expect(await seqs(apart.records({ from: await apart.seekSeq(records - 100) }))).toEqual(wanted);
    expect(twice.reads).toBe(2);

    const once = viewOf(content, false);
    expect(await seqs(new LineViewReader('log', once).recordsFromSeq(records - 100))).toEqual(wanted);
    expect(once.reads).toBe(1);

    const now = viewOf(content, true);
    expect(await seqs(new LineViewReader('log', now).recordsFromSeq(records - 100))).toEqual(wanted);
    // Where the lines end (the last LF of the last 64 KiB), the seek's read, then the pre-allocated space after them.
    expect({ reads: now.reads, readsNow: now.readsNow }).toEqual({ reads: 0, readsNow: 3 });

    // A journal that ends with its lines (no pre-allocated space): the seek answers from the bytes read to find where
    // the lines end, and nothing is read again.
    const bare = logOf(
      Array.from({ length: 50_000 }, () => ({ kind: 'record', pad: 200 })),
      0,
    );
    const tight = viewOf(bare.content, true);
    expect(await seqs(new LineViewReader('log', tight).recordsFromSeq(bare.records - 100))).toEqual(wanted);
    expect({ reads: tight.reads, readsNow: tight.readsNow }).toEqual({ reads: 0, readsNow: 1 });

    // A journal being written ends in up to 64 KiB of pre-allocated space: the records before it are read at once too.
    const written = logOf(
      Array.from({ length: 50_000 }, () => ({ kind: 'record', pad: 200 })),
      64 * 1024 - 1,
    );
    const spaced = viewOf(written.content, true);
    expect(await seqs(new LineViewReader('log', spaced).recordsFromSeq(written.records - 100))).toEqual(wanted);
    expect(spaced.reads).toBe(0);

    // A target far back reads asynchronously: only the tail is read at once.
    const far = viewOf(content, true);
    expect((await seqs(new LineViewReader('log', far).recordsFromSeq(records - 5000))).slice(0, 2)).toEqual([
      records - 5000,
      records - 4999,
    ]);
    expect(far.reads).toBeGreaterThan(0);
  });

  it('seeks with a subclass’s own seekSeq (a database index), not by bisection', async () => {
    const { content } = logOf(
      Array.from({ length: 100 }, () => ({ kind: 'record', pad: 10 })),
      0,
    );
    class FromStart extends LineViewReader {
      override async seekSeq(): Promise<number> {
        return 0;
      }
    }
    const items = await collect(new FromStart('log', viewOf(content, true)).recordsFromSeq(90));
    expect(items.filter((item) => item.kind === 'record')).toHaveLength(100);
  });
});
