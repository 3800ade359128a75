import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openFileJournalReader } from '../../src/store/file-journal-view.js';
import { type FileSystem, nodeFileSystem, synchronousRead, withSynchronousRead } from '../support/internals.js';
import { tempDir } from '../support/temp.js';

/** The real file system with its reads counted: a spread, so without the real synchronous twins. */
function counted(): { fs: FileSystem; reads: { async: number; now: number } } {
  const reads = { async: 0, now: 0 };
  const fs: FileSystem = {
    ...nodeFileSystem,
    read: (fd, buffer, offset, length, position) => {
      reads.async += 1;
      return nodeFileSystem.read(fd, buffer, offset, length, position);
    },
  };
  return { fs, reads };
}

async function seqsFrom(fs: FileSystem, path: string, target: number): Promise<number[]> {
  const reader = await openFileJournalReader(fs, path);
  const seqs: number[] = [];
  for await (const batch of reader.recordsFromSeq?.(target) ?? [])
    for (const item of batch) if (item.kind === 'record') seqs.push(item.record.value.seq as number);
  await reader.close();
  return seqs;
}

describe('the file store reader reads the tail of a journal at once (issue 39)', () => {
  const path = join(tempDir(), 'events.jsonl');
  const lines = Array.from(
    { length: 2000 },
    (_, seq) =>
      `${JSON.stringify({ seq, ts: '2026-11-29T00:00:00.000Z', type: 'x.test.pad', payload: { p: 'y'.repeat(100) } })}\n`,
  );
  writeFileSync(path, lines.join(''));
  const wanted = Array.from({ length: 100 }, (_, i) => 1900 + i);

  it('through the file system’s synchronous read twin, where it has one', async () => {
    const { fs, reads } = counted();
    const readNow = synchronousRead(nodeFileSystem);
    if (readNow === undefined) throw new Error('the real file system has a synchronous read');
    withSynchronousRead(fs, (fd, buffer, offset, length, position) => {
      reads.now += 1;
      return readNow(fd, buffer, offset, length, position);
    });
    expect(await seqsFrom(fs, path, 1900)).toEqual(wanted);
    // The last 64 KiB, read to find where the lines end: the file ends with its lines, so the seek and the 100
    // records are answered from those bytes.
    expect(reads).toEqual({ async: 0, now: 1 });
  });

  it('through its asynchronous read otherwise (a wrapper made by a spread has no twin)', async () => {
    const { fs, reads } = counted();
    expect(await seqsFrom(fs, path, 1900)).toEqual(wanted);
    expect(reads).toEqual({ async: 1, now: 0 });
  });
});
