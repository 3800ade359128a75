import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { errnoError } from '../support/faulty-fs.js';
import { AppendFile, type FileSystem, nodeFileSystem } from '../support/internals.js';
import { eventRecord, readAll } from '../support/journal.js';
import { tempDir } from '../support/temp.js';

/** One write of the file as it was issued and ended, and whether it carried pre-allocated space alone (zeros). */
interface Write {
  readonly position: number;
  readonly length: number;
  readonly zeros: boolean;
  readonly trailingZeros: boolean;
  readonly start: number;
  end: number | undefined;
}

/**
 * The real file system, recording the writes and syncs of one file, and letting a test hold, or fail, the writes of
 * zeros alone (the space a writer adds ahead of its lines, spec §3.8) and the sync that follows such a write.
 */
function spaceWatch() {
  const writes: Write[] = [];
  const syncs: { start: number; afterSpace: boolean }[] = [];
  let tick = 0;
  let spaceWritten = false;
  const control = {
    /** While set, a write of zeros alone waits for it before it is made. */
    hold: undefined as Promise<void> | undefined,
    /** A write of zeros alone fails with this errno code, after half of its bytes reached the file. */
    failSpaceWrite: undefined as string | undefined,
    /** The sync after a write of zeros alone fails with this errno code. */
    failSpaceSync: undefined as string | undefined,
    spaceWritesStarted: 0,
  };
  const fs: FileSystem = {
    ...nodeFileSystem,
    async write(fd, buffer, offset, length, position, options) {
      const bytes = buffer.subarray(offset, offset + length);
      const zeros = bytes.every((b) => b === 0);
      const entry: Write = {
        position,
        length,
        zeros,
        trailingZeros: !zeros && bytes[bytes.length - 1] === 0,
        start: ++tick,
        end: undefined,
      };
      writes.push(entry);
      if (zeros) {
        control.spaceWritesStarted += 1;
        if (control.hold !== undefined) await control.hold;
        if (control.failSpaceWrite !== undefined) {
          // Torn, as a write cut short by a disk that ran full.
          await nodeFileSystem.write(fd, buffer, offset, Math.floor(length / 2), position);
          entry.end = ++tick;
          throw errnoError(control.failSpaceWrite, 'write', 'journal');
        }
        spaceWritten = true;
      }
      try {
        return await nodeFileSystem.write(fd, buffer, offset, length, position, options);
      } finally {
        entry.end = ++tick;
      }
    },
    async fdatasync(fd) {
      const afterSpace = spaceWritten;
      spaceWritten = false;
      syncs.push({ start: ++tick, afterSpace });
      if (afterSpace && control.failSpaceSync !== undefined)
        throw errnoError(control.failSpaceSync, 'fdatasync', 'journal');
      return nodeFileSystem.fdatasync(fd);
    },
  };
  return { fs, writes, syncs, control };
}

function journal(): string {
  const file = join(tempDir('tj-space-ahead-'), 'events.jsonl');
  writeFileSync(file, '');
  return file;
}

const record = (n: number, size = 300) => eventRecord(n, 'm'.repeat(size));

/** Waits until `condition` holds, a macrotask at a time (the background work it waits for runs meanwhile). */
async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 10_000 && !condition(); i += 1) await new Promise((resolve) => setImmediate(resolve));
  expect(condition()).toBe(true);
}

describe('the space is extended ahead of the appends, off their path (spec §3.8, §11.6)', () => {
  it('once the space is at its full size no append writes space itself: zeros alone are written past the lines, each with its own sync (TJ-DUR-035)', async () => {
    const file = journal();
    const { fs, writes, syncs } = spaceWatch();
    const writer = await AppendFile.open(file, { durability: 'every', fs });
    for (let n = 0; n < 800; n += 1) {
      await writer.appendRecord(record(n));
      const size = statSync(file).size;
      expect(size - writer.size, `space after append ${n}`).toBeLessThanOrEqual(64 * 1024);
    }
    const lineWrites = writes.filter((w) => !w.zeros);
    const spaceWrites = writes.filter((w) => w.zeros);
    // A small journal's appends add its space (a page, then as much as it holds) with their own writes; once the
    // space is 64 KiB, it is extended ahead of them.
    expect(lineWrites.filter((w) => w.trailingZeros).length).toBeGreaterThan(0);
    expect(lineWrites.filter((w) => w.trailingZeros && w.position >= 128 * 1024)).toEqual([]);
    expect(spaceWrites.length).toBeGreaterThan(3);
    expect(spaceWrites.every((w) => w.position >= 64 * 1024)).toBe(true);
    // Zeros only past the lines of their time: a line is never written over.
    for (const space of spaceWrites) {
      const linesBefore = lineWrites.filter((w) => w.start < space.start);
      const linesEnd = Math.max(...linesBefore.map((w) => w.position + (w.trailingZeros ? 0 : w.length)));
      expect(space.position).toBeGreaterThanOrEqual(linesEnd);
    }
    expect(syncs.filter((s) => s.afterSpace)).toHaveLength(spaceWrites.length);
    await writer.close();
    expect(statSync(file).size, 'the close truncated the space away (TJ-DUR-034)').toBe(writer.size);
    expect((await readAll(file)).records.map((r) => r.value.seq)).toEqual(Array.from({ length: 800 }, (_, n) => n + 1));
  });

  it('in group mode the batches extend the space themselves: an extension ahead would run beside their syncs', async () => {
    const file = journal();
    const { fs, writes } = spaceWatch();
    const writer = await AppendFile.open(file, { durability: 'group', fs });
    for (let n = 0; n < 800; n += 8)
      await Promise.all(Array.from({ length: 8 }, (_, k) => writer.appendRecord(record(n + k))));
    expect(writes.filter((w) => w.zeros)).toEqual([]);
    expect(writes.filter((w) => w.trailingZeros && w.position >= 128 * 1024).length).toBeGreaterThan(0);
    await writer.close();
    expect((await readAll(file)).records).toHaveLength(800);
  });

  it('an append that would pass the space while an extension writes waits for it: its line is never overwritten with zeros (TJ-DUR-006)', async () => {
    const file = journal();
    const { fs, writes, control } = spaceWatch();
    const writer = await AppendFile.open(file, { durability: 'every', fs });
    let release: () => void = () => undefined;
    control.hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    let n = 0;
    while (control.spaceWritesStarted === 0 && n < 1000) await writer.appendRecord(record(n++));
    expect(control.spaceWritesStarted, 'an extension began').toBe(1);
    // The extension's zeros are held; a record larger than the space left goes past its end.
    const large = writer.appendRecord(record(n++, 70 * 1024));
    await new Promise((resolve) => setTimeout(resolve, 20));
    const space = writes.find((w) => w.zeros);
    const largeWrite = () => writes.find((w) => !w.zeros && w.length > 70 * 1024);
    expect(largeWrite(), 'the large line waits for the extension').toBeUndefined();
    release();
    await large;
    expect(largeWrite()?.start).toBeGreaterThan(space?.end ?? Number.POSITIVE_INFINITY);
    await writer.appendRecord(record(n++));
    await writer.close();
    expect((await readAll(file)).records.map((r) => r.value.seq)).toEqual(Array.from({ length: n }, (_, k) => k + 1));
  });

  it('a failed sync of the space poisons the writer, as any failed sync does: it may have taken the error of lines written meanwhile (TJ-DUR-021)', async () => {
    const file = journal();
    const { fs, syncs, control } = spaceWatch();
    control.failSpaceSync = 'EIO';
    // `none` mode: between flushes, the extension's sync is the only one, so the failure is surely its own.
    const writer = await AppendFile.open(file, { durability: 'none', fs });
    await writer.appendRecord(record(0));
    await writer.flush();
    let n = 1;
    let refused: unknown;
    try {
      for (; n < 400; n += 1) await writer.appendRecord(record(n));
    } catch (error) {
      refused = error;
    }
    expect(syncs.filter((s) => s.afterSpace)).toHaveLength(1);
    expect((refused as { code?: string } | undefined)?.code).toBe('writer_poisoned');
    // The flush that would make the lines durable says so (close reports only its own sync, skipped once poisoned).
    await expect(writer.flush()).rejects.toMatchObject({ code: 'writer_poisoned' });
    await writer.close();
  });

  it('without room for the space ahead the writer goes on: the appends extend it themselves, as before (TJ-DUR-022)', async () => {
    const file = journal();
    const { fs, writes, control } = spaceWatch();
    control.failSpaceWrite = 'ENOSPC';
    const writer = await AppendFile.open(file, { durability: 'every', fs });
    let n = 0;
    while (control.spaceWritesStarted === 0 && n < 1000) await writer.appendRecord(record(n++));
    const failed = writes.find((w) => w.zeros);
    await until(() => failed?.end !== undefined && statSync(file).size === failed.position);
    // The zeros that fitted were cut away: the file is as it was before the extension.
    expect(statSync(file).size).toBe(failed?.position);
    for (; n < 600; n += 1) await writer.appendRecord(record(n));
    expect(control.spaceWritesStarted, 'tried once, then no more').toBe(1);
    const extendedByAppends = writes.filter((w) => w.trailingZeros && w.start > (failed?.start ?? 0));
    expect(extendedByAppends.length, 'appends past the space extended it').toBeGreaterThan(0);
    await writer.close();
    expect((await readAll(file)).records).toHaveLength(600);
    expect(readFileSync(file).includes(0), 'closed: lines only').toBe(false);
  });

  it('close waits for an extension under way before it truncates and closes the descriptor (TJ-DUR-034)', async () => {
    const file = journal();
    const { fs, writes, control } = spaceWatch();
    let release: () => void = () => undefined;
    control.hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    const writer = await AppendFile.open(file, { durability: 'every', fs });
    let n = 0;
    while (control.spaceWritesStarted === 0 && n < 1000) await writer.appendRecord(record(n++));
    expect(control.spaceWritesStarted, 'an extension began').toBe(1);
    let closed = false;
    const closing = writer.close().then(() => {
      closed = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(closed, 'close waits for the extension').toBe(false);
    release();
    await closing;
    await until(() => closed);
    expect(writes.find((w) => w.zeros)?.end).toBeDefined();
    expect(statSync(file).size).toBe(writer.size);
    expect((await readAll(file)).records).toHaveLength(n);
  });
});
