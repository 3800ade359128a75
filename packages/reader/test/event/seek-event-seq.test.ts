import { propertyParameters } from '@turnjournal/test-support';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { seekEventSeq } from '../../src/event/seek-event-seq.js';
import type { JournalSource } from '../../src/framing/read-journal.js';

/** An in-memory source that counts its reads and the bytes they asked for. */
function counted(content: Buffer): JournalSource & { reads: number; bytes: number } {
  const source = {
    reads: 0,
    bytes: 0,
    read: async (buffer: Uint8Array, offset: number, length: number, position: number) => {
      source.reads += 1;
      source.bytes += length;
      const n = Math.max(0, Math.min(length, content.length - position));
      buffer.set(content.subarray(position, position + n), offset);
      return n;
    },
  };
  return source;
}

type Piece =
  | { readonly kind: 'record'; readonly pad: number }
  | { readonly kind: 'garbage'; readonly length: number }
  | { readonly kind: 'long'; readonly length: number };

/**
 * A log of records with seqs 0, 1, 2 … in order, each padded to a random length, with damaged lines and lines longer
 * than the probe's first read (or than the whole window) between them, and pre-allocated space (NULs) at the end.
 */
function buildLog(pieces: readonly Piece[], space: number) {
  const parts: Buffer[] = [];
  const starts: { seq: number; offset: number }[] = [];
  const pieceOf = new Map<number, number>();
  let offset = 0;
  let seq = 0;
  for (const piece of pieces) {
    let text: string;
    if (piece.kind !== 'garbage') pieceOf.set(seq, parts.length);
    if (piece.kind === 'record') {
      starts.push({ seq, offset });
      text = `${JSON.stringify({ seq, ts: '2026-11-26T00:00:00.000Z', type: 'x.test.pad', payload: { p: 'y'.repeat(piece.pad) } })}\n`;
      seq += 1;
    } else if (piece.kind === 'garbage') text = `${'{"seq":'.repeat(piece.length)}\n`;
    else {
      // A record too long for the first read (or the window): it still counts, as a record with its seq.
      starts.push({ seq, offset });
      text = `${JSON.stringify({ seq, ts: '2026-11-26T00:00:00.000Z', type: 'x.test.pad', payload: { p: 'z'.repeat(piece.length) } })}\n`;
      seq += 1;
    }
    const bytes = Buffer.from(text);
    parts.push(bytes);
    offset += bytes.length;
  }
  parts.push(Buffer.alloc(space));
  const longest = parts.slice(0, -1).reduce((most, part) => Math.max(most, part.length), 0);
  // Where the line after the last record with seq < target starts (0 when there is none).
  const afterLastBelow = (target: number): number => {
    const last = starts.filter((start) => start.seq < target).at(-1);
    if (last === undefined) return 0;
    return last.offset + (parts[pieceOf.get(last.seq) as number] as Buffer).length;
  };
  return { content: Buffer.concat(parts), starts, records: seq, linesEnd: offset, longest, afterLastBelow };
}

const piece: fc.Arbitrary<Piece> = fc.oneof(
  { weight: 20, arbitrary: fc.record({ kind: fc.constant('record' as const), pad: fc.integer({ min: 0, max: 600 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('garbage' as const), length: fc.integer({ min: 1, max: 50 }) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('long' as const), length: fc.integer({ min: 4000, max: 40_000 }) }),
  },
);

describe('seekEventSeq (spec §15.6)', () => {
  it('never answers past the first record with seq >= target, and every record before its answer is smaller', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(piece, { minLength: 0, maxLength: 3000, size: 'max' }),
        fc.integer({ min: 0, max: 64 * 1024 }),
        fc.double({ min: 0, max: 1.1, noNaN: true }),
        fc.integer({ min: 1024, max: 256 * 1024 }),
        async (pieces, space, where, windowBytes) => {
          const log = buildLog(pieces, space);
          const target = Math.floor(where * (log.records + 1));
          const answer = await seekEventSeq(target, {
            source: counted(log.content),
            size: log.content.length,
            windowBytes,
          });
          const first = log.starts.find((start) => start.seq >= target);
          expect(answer).toBeLessThanOrEqual(first?.offset ?? log.linesEnd);
          // A line start: where a forward read can begin.
          expect(answer === 0 || log.content[answer - 1] === 0x0a).toBe(true);
          for (const start of log.starts) if (start.offset < answer) expect(start.seq).toBeLessThan(target);
          // Exact when every line fits the window: the line right after the last record before the target (issue 39).
          if (log.longest < windowBytes) expect(answer).toBe(log.afterLastBelow(target));
        },
      ),
      propertyParameters({ defaultRuns: 200 }),
    );
  });

  it('a target near the end of a large log costs a few small reads, not a bisection of the whole file', async () => {
    const pieces: Piece[] = Array.from({ length: 200_000 }, () => ({ kind: 'record', pad: 120 }));
    const log = buildLog(pieces, 32 * 1024);
    expect(log.content.length).toBeGreaterThan(30e6);
    const near = counted(log.content);
    const answer = await seekEventSeq(log.records - 100, { source: near, size: log.content.length });
    expect(answer).toBeLessThanOrEqual(log.starts[log.records - 100]?.offset as number);
    expect(answer).toBeGreaterThan(log.content.length - 2 * 64 * 1024 - 32 * 1024);
    // The first step back from the end reads the last 64 KiB, where the target is: the exact line is found in them.
    const last = 64 * 1024 + 4096;
    expect(near.reads).toBe(1);
    expect(near.bytes).toBeLessThanOrEqual(64 * 1024);
    expect(answer).toBe(log.afterLastBelow(log.records - 100));
    // A target at the start still takes O(log size) probes of 4 KiB.
    const far = counted(log.content);
    expect(await seekEventSeq(100, { source: far, size: log.content.length })).toBeLessThanOrEqual(
      log.starts[100]?.offset as number,
    );
    expect(far.reads).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(log.content.length / (64 * 1024))) + 3);
    expect(far.bytes).toBeLessThanOrEqual(64 * 1024 + (far.reads - 2) * 4096 + last);
  });
});
