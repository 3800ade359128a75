import { writeFileSync } from 'node:fs';
import { propertyParameters } from '@turnjournal/test-support';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineSplitter } from '../../src/framing/line-splitter.js';
import { trailingNulCount } from '../../src/framing/space.js';
import { type JournalItem, type JournalSource, RECOVERY_MODES, readJournal } from '../../src/index.js';
import { comparable, readAll, summary, tempFile } from '../support/temp.js';

const a = { version: 1, event: 'worker_started', turn_id: 'a', created_at: 1 };
const b = { version: 1, event: 'worker_started', turn_id: 'b', created_at: 2 };
const line = (value: unknown) => `${JSON.stringify(value)}\n`;
const bytes = (...parts: (string | Uint8Array)[]) =>
  Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : part)));
const nuls = (length: number) => Buffer.alloc(length);

function findingsOf(items: readonly JournalItem[]) {
  return items.flatMap((item) => (item.kind === 'finding' ? [item.finding] : []));
}

describe('pre-allocated space (spec §3.8)', () => {
  it('a NUL run after the last LF that reaches the end of the file is space: no record, no finding (TJ-FRAME-036)', async () => {
    const items = await readAll(tempFile(bytes(line(a), line(b), nuls(4096))));
    expect(summary(items)).toEqual({ records: [a, b], findings: [] });
  });

  it('a file of NUL bytes only is space: no record, no finding (TJ-FRAME-036)', async () => {
    for (const length of [1, 4096, 100_000]) {
      expect(summary(await readAll(tempFile(nuls(length)), { chunkBytes: 1000 }))).toEqual({
        records: [],
        findings: [],
      });
    }
  });

  it('a torn tail followed by space is reported without the space: its length ends at the last byte that is not NUL (TJ-FRAME-030, TJ-FRAME-036)', async () => {
    const torn = '{"version":1,"ev';
    const items = await readAll(tempFile(bytes(line(a), torn, nuls(5000))), { chunkBytes: 64 });
    expect(summary(items)).toEqual({ records: [a], findings: ['torn_tail@-'] });
    expect(findingsOf(items)[0]).toMatchObject({ offset: line(a).length, length: torn.length });
  });

  it('NUL bytes after the last LF followed by other bytes are part of the torn tail (TJ-FRAME-030)', async () => {
    const torn = bytes(nuls(10), '{"ver', nuls(3), 'x');
    const items = await readAll(tempFile(bytes(line(a), torn, nuls(7))));
    expect(summary(items)).toEqual({ records: [a], findings: ['torn_tail@-'] });
    expect(findingsOf(items)[0]).toMatchObject({ offset: line(a).length, length: torn.length });
  });

  it('space is never damage: prefix and strict modes read the file whole and report nothing (TJ-FRAME-036, TJ-FRAME-024)', async () => {
    const path = tempFile(bytes(line(a), line(b), nuls(2048)));
    for (const mode of RECOVERY_MODES) {
      expect(summary(await readAll(path, { mode }))).toEqual({ records: [a, b], findings: [] });
    }
    const torn = tempFile(bytes(line(a), '{"v', nuls(2048)));
    for (const mode of RECOVERY_MODES) {
      expect(summary(await readAll(torn, { mode }))).toEqual({ records: [a], findings: ['torn_tail@-'] });
    }
  });

  it('a NUL run followed by a record and an LF at the end is still a zero-filled committed line (TJ-FRAME-028)', async () => {
    const path = tempFile(bytes(line(a), nuls(4096), line(b)));
    const items = await readAll(path);
    // Tolerant mode salvages the record after the run (TJ-FRAME-029); the run is damage, not space.
    expect(summary(items)).toEqual({ records: [a, b], findings: ['zero_filled_region@2'] });
    expect(findingsOf(items)[0]).toMatchObject({ offset: line(a).length, length: 4096 });
    expect(summary(await readAll(path, { mode: 'prefix' }))).toEqual({
      records: [a],
      findings: ['zero_filled_region@2'],
    });
    await expect(readAll(path, { mode: 'strict' })).rejects.toMatchObject({ code: 'zero_filled_region', line: 2 });
  });

  it('a torn tail longer than the line-size limit, then space, is counted without being held (TJ-FRAME-032, TJ-FRAME-036)', async () => {
    const torn = `{"pad":"${'x'.repeat(3000)}`;
    const items = await readAll(tempFile(bytes(line(a), torn, nuls(5000))), { maxLineBytes: 1000, chunkBytes: 256 });
    expect(summary(items)).toEqual({ records: [a], findings: ['torn_tail@-'] });
    expect(findingsOf(items)[0]).toMatchObject({ offset: line(a).length, length: torn.length });
    // Space longer than the limit after the last LF is still space.
    const long = await readAll(tempFile(bytes(line(a), nuls(5000))), { maxLineBytes: 1000, chunkBytes: 256 });
    expect(summary(long)).toEqual({ records: [a], findings: [] });
  });

  it('a read that starts at the space finds nothing (TJ-FRAME-036)', async () => {
    const path = tempFile(bytes(line(a), nuls(300)));
    expect(summary(await readAll(path, { startOffset: line(a).length }))).toEqual({ records: [], findings: [] });
  });

  it('a reader that read up to the space finds the records a writer later wrote into it, at an unchanged size (TJ-FRAME-037)', async () => {
    const head = bytes(line(a));
    const path = tempFile(bytes(head, nuls(1024)));
    // The first read: where a follower resumes is where the data ends, the start of the space, not the file's size.
    const splitter = new LineSplitter(1000);
    splitter.push(bytes(head, nuls(1024)));
    expect(splitter.end()).toBeUndefined();
    const resume = splitter.dataEnd;
    expect(resume).toBe(head.length);
    // A writer fills part of the space: the file's size does not change.
    const appended = Buffer.from(line(b));
    writeFileSync(path, bytes(head, appended, nuls(1024 - appended.length)));
    expect(summary(await readAll(path, { startOffset: resume }))).toEqual({ records: [b], findings: [] });
  });

  it('reads the same records and findings for any chunk size and any amount of space (TJ-FRAME-036)', async () => {
    const tails = fc.constantFrom('', '{"v', `${line(b)}{"ver`, '\u0000\u0000x');
    await fc.assert(
      fc.asyncProperty(
        tails,
        fc.nat({ max: 3000 }),
        fc.integer({ min: 1, max: 700 }),
        async (tail, space, chunkBytes) => {
          const withSpace = tempFile(bytes(line(a), tail, nuls(space)));
          const without = tempFile(bytes(line(a), tail));
          const got = comparable(await readAll(withSpace, { chunkBytes, maxLineBytes: 512 }));
          const want = comparable(await readAll(without, { chunkBytes, maxLineBytes: 512 }));
          // The files' paths differ; everything else must be equal.
          const strip = (items: unknown[]) => items.map((item) => ({ ...(item as object), file: undefined }));
          expect(strip(got)).toEqual(strip(want));
        },
      ),
      propertyParameters(),
    );
  });
});

/** A file a writer fills: reads see `before` until `after` reads have been made, then `after`'s bytes. */
function fillingSource(before: Buffer, after: Buffer, readsBefore: number): JournalSource {
  let reads = 0;
  return {
    read: async (buffer, offset, length, position) => {
      const content = reads++ < readsBefore ? before : after;
      const n = Math.max(0, Math.min(length, content.length - position));
      buffer.set(content.subarray(position, position + n), offset);
      return n;
    },
  };
}

async function readSource(source: JournalSource, options: { chunkBytes: number; mode?: 'tolerant' | 'strict' }) {
  const items: JournalItem[] = [];
  for await (const batch of readJournal('filling.jsonl', { ...options, source })) items.push(...batch);
  return items;
}

describe('a reader racing a writer that fills pre-allocated space (TJ-FRAME-036, TJ-FRAME-028)', () => {
  const c = { version: 1, event: 'completed', turn_id: 'a', created_at: 3 };
  const head = Buffer.from(line(a));
  const records = Buffer.from(line(b) + line(c));
  const before = bytes(head, nuls(300));
  const after = bytes(head, records, nuls(300 - records.length));
  const lines = (items: readonly JournalItem[]) =>
    items.map((i) => (i.kind === 'record' ? `record@${i.record.line}` : `${i.finding.code}@${i.finding.line}`));

  it('reads a line whose start it saw as space before the writer filled it as the records it holds, not as damage', async () => {
    // The first read ends 10 bytes into the space; the writer appends b and c before the next one.
    for (const mode of ['tolerant', 'strict'] as const) {
      const items = await readSource(fillingSource(before, after, 1), { chunkBytes: head.length + 10, mode });
      expect(summary(items)).toEqual({ records: [a, b, c], findings: [] });
      expect(lines(items)).toEqual(['record@1', 'record@2', 'record@3']);
    }
  });

  it('finds every record the writer appended when the first read saw all of one of them as space, and numbers the lines after it', async () => {
    const d = { version: 1, event: 'worker_started', turn_id: 'd', created_at: 4 };
    const more = Buffer.from(line(b) + line(c) + line(d));
    const filled = bytes(head, more, nuls(300 - more.length));
    const items = await readSource(fillingSource(before, filled, 1), { chunkBytes: head.length + line(b).length + 5 });
    expect(summary(items)).toEqual({ records: [a, b, c, d], findings: [] });
    expect(lines(items)).toEqual(['record@1', 'record@2', 'record@3', 'record@4']);
  });

  it('still reports a committed line that starts with NUL when reading it again finds the same bytes', async () => {
    const damaged = bytes(head, nuls(8), line(b), line(c));
    const items = await readSource(fillingSource(damaged, damaged, 0), { chunkBytes: head.length + 4 });
    expect(summary(items)).toEqual({ records: [a, b, c], findings: ['zero_filled_region@2'] });
    expect(lines(items)).toEqual(['record@1', 'zero_filled_region@2', 'record@2', 'record@3']);
  });
});

describe('trailingNulCount', () => {
  it('counts the NUL bytes at the end of a range, across whole blocks and partial ones', () => {
    expect(trailingNulCount(Buffer.from('abc'))).toBe(0);
    expect(trailingNulCount(nuls(0))).toBe(0);
    expect(trailingNulCount(bytes('x', nuls(10_000)))).toBe(10_000);
    expect(trailingNulCount(nuls(10_000))).toBe(10_000);
    expect(trailingNulCount(bytes('x', nuls(5000), 'y', nuls(9000)))).toBe(9000);
    expect(trailingNulCount(bytes('x', nuls(9000)), 4000)).toBe(5001);
    expect(trailingNulCount(bytes('x', nuls(9000), 'y'), 0, 9001)).toBe(9000);
    // A plain Uint8Array view at an offset, not a Buffer.
    const view = new Uint8Array(bytes('zz', 'x', nuls(8192)).buffer).subarray(2);
    expect(trailingNulCount(view)).toBe(8192);
  });
});
