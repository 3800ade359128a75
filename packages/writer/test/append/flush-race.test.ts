import { describe, expect, it } from 'vitest';
import { AppendFile, type FileSystem, nodeFileSystem } from '../support/internals.js';
import { eventRecord, readAll } from '../support/journal.js';
import { tempDir } from '../support/temp.js';

/** The real file system, with its syncs (a flush's fdatasync, close's fsync) held until let go, and counted. */
function gatedSync() {
  let release: () => void = () => undefined;
  let gate: Promise<void> | null = null;
  let started: () => void = () => undefined;
  const syncs: number[] = [];
  const gated =
    (sync: (fd: number) => Promise<void>) =>
    async (fd: number): Promise<void> => {
      syncs.push(fd);
      started();
      if (gate !== null) await gate;
      return sync(fd);
    };
  const fs: FileSystem = {
    ...nodeFileSystem,
    fdatasync: gated(nodeFileSystem.fdatasync),
    fsync: gated(nodeFileSystem.fsync),
  };
  return {
    fs,
    syncs,
    /** Holds the next sync; resolves once it has started. */
    hold(): Promise<void> {
      gate = new Promise((resolve) => {
        release = resolve;
      });
      return new Promise((resolve) => {
        started = resolve;
      });
    },
    release(): void {
      gate = null;
      release();
    },
  };
}

/**
 * Opens a `none`-mode writer on a new file, appends `before`, then appends `during` while a flush's sync is held
 * open, and lets that flush finish. Resolves with the writer and the syncs of the file counted from the flush on
 * (opening fsyncs the file and its directory, which are not counted).
 */
async function writeDuringFlush(file: string) {
  const gated = gatedSync();
  const writer = await AppendFile.open(file, { durability: 'none', fs: gated.fs });
  await writer.appendRecord(eventRecord(0, 'before'));
  const base = gated.syncs.length;
  const syncStarted = gated.hold();
  const first = writer.flush();
  await syncStarted;
  // The sync of the first flush is running: this write may not be covered by it.
  await writer.appendRecord(eventRecord(1, 'during'));
  gated.release();
  await first;
  return { writer, syncsSinceFlush: () => gated.syncs.length - base };
}

describe('none mode: a write that lands while a sync runs is synced by the next flush (TJ-DUR-015, TJ-LIVE-006)', () => {
  it('flush after a write made during an earlier flush syncs again', async () => {
    const file = `${tempDir('tj-flush-race-')}/events.jsonl`;
    const { writer, syncsSinceFlush } = await writeDuringFlush(file);
    try {
      expect(syncsSinceFlush()).toBe(1);
      await writer.flush();
      expect(syncsSinceFlush()).toBe(2);
      // Nothing written since: a third flush has nothing to sync.
      await writer.flush();
      expect(syncsSinceFlush()).toBe(2);
    } finally {
      await writer.close();
    }
    const contents = await readAll(file);
    expect(contents.findings).toEqual([]);
    expect(contents.records.map((r) => (r.value.payload as { message: { content: string } }).message.content)).toEqual([
      'before',
      'during',
    ]);
  });

  it('close after a write made during a flush fsyncs it (TJ-DUR-015)', async () => {
    const { writer, syncsSinceFlush } = await writeDuringFlush(`${tempDir('tj-flush-race-')}/events.jsonl`);
    await writer.close();
    expect(syncsSinceFlush()).toBe(2);
  });
});
