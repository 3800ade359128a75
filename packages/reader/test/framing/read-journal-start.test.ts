import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type JournalItem, readJournal } from '../../src/framing/read-journal.js';
import { eventLog, PROPERTY, PROPERTY_TIMEOUT } from '../event/event-log.js';
import { comparable, readAll, tempFile } from '../support/temp.js';

async function readFrom(path: string, start: number, chunkBytes: number, maxLineBytes?: number) {
  const items: JournalItem[] = [];
  const options = { chunkBytes, startOffset: start, ...(maxLineBytes === undefined ? {} : { maxLineBytes }) };
  for await (const batch of readJournal(path, options)) items.push(...batch);
  return items;
}

// Line numbers are relative after a start > 0; everything else must match the whole-file read, except writer
// violations, which each read reports once, at the first line it reads that shows one (TJ-FAM-026).
const withoutLines = (items: readonly JournalItem[]) =>
  comparable(items.filter((item) => item.kind === 'record' || !item.finding.code.startsWith('writer_violation_'))).map(
    (item) => {
      const { line: _line, ...rest } = item as { line?: number };
      return rest;
    },
  );

describe('readJournal with startOffset', () => {
  it(
    'reads like readJournal in tolerant mode from offset 0, for any log and chunk size',
    async () => {
      await fc.assert(
        fc.asyncProperty(eventLog(true), fc.integer({ min: 5, max: 80 }), async (log, chunkBytes) => {
          const path = tempFile(log.content);
          expect(comparable(await readFrom(path, 0, chunkBytes))).toEqual(comparable(await readAll(path)));
        }),
        PROPERTY,
      );
    },
    PROPERTY_TIMEOUT,
  );

  it(
    'reads from any line start the items readJournal yields from that line on, with offsets and no line numbers',
    async () => {
      await fc.assert(
        fc.asyncProperty(eventLog(true), fc.nat(), fc.integer({ min: 5, max: 80 }), async (log, pick, chunkBytes) => {
          const path = tempFile(log.content);
          const bytes = Buffer.from(log.content);
          const starts = [0];
          for (let i = bytes.indexOf(0x0a); i >= 0; i = bytes.indexOf(0x0a, i + 1)) starts.push(i + 1);
          const start = starts[pick % starts.length] ?? 0;
          const whole = (await readAll(path)).filter((item) =>
            item.kind === 'record' ? item.record.offset >= start : (item.finding.offset ?? 0) >= start,
          );
          const from = await readFrom(path, start, chunkBytes);
          expect(withoutLines(from)).toEqual(withoutLines(whole));
          if (start > 0) expect(from.every((i) => i.kind === 'record' || i.finding.line === undefined)).toBe(true);
        }),
        PROPERTY,
      );
    },
    PROPERTY_TIMEOUT,
  );

  it('reports an oversized line by offset and length', async () => {
    const path = tempFile('{"seq":0}\n0123456789\n');
    const items = await readFrom(path, 10, 4, 5);
    expect(
      items.map((i) => (i.kind === 'finding' ? [i.finding.code, i.finding.offset, i.finding.length] : [])),
    ).toEqual([['oversized_line', 10, 10]]);
  });
});
