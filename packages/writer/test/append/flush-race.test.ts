import { describe, expect, it } from 'vitest';
import { AppendFile, type FileSystem, nodeFileSystem } from '../support/internals.js';
import { eventRecord, readAll } from '../support/journal.js';
import { tempDir } from '../support/temp.js';

/** A gate syncs pass: `hold()` shuts it and resolves once a sync has reached it, `release()` lets them go. */
function syncGate() {
  let release: () => void = () => undefined;
  let gate: Promise<void> | null = null;
  let started: () => void = () => undefined;
  return {
    async pass(): Promise<void> {
      started();
      if (gate !== null) await gate;
    },
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

/** The real file system, with its syncs (a flush's fdatasync, close's fsync) held until let go, and counted. */
function gatedSync() {
  const gate = syncGate();
  const syncs: number[] = [];
  const gated =
    (sync: (fd: number) => Promise<void>) =>
    async (fd: number): Promise<void> => {
      syncs.push(fd);
      await gate.pass();
      return sync(fd);
    };
  const fs: FileSystem = {
    ...nodeFileSystem,
    fdatasync: gated(nodeFileSystem.fdatasync),
    fsync: gated(nodeFileSystem.fsync),
  };
  return { fs, syncs, hold: gate.hold, release: gate.release };
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

/**
 * A flush nobody awaited, whose sync has not run yet, then close (or another flush after close began): close waits for
 * that sync before it closes the descriptor, so the flush resolves and nothing is poisoned. Before, close went ahead,
 * the flush's `fdatasync` then ran on a closed descriptor (EBADF) and poisoned the file (found with the live hub's
 * delta work, 2026-11-26).
 */
describe('close and a flush that has not synced yet', () => {
  /**
   * The real file system with only `fdatasync` (a flush's sync) held until let go, and the order in which the syncs
   * and the closes of `file`'s descriptors ran (the lock file's are not counted).
   */
  function heldFlushSync(file: string) {
    const events: string[] = [];
    const ofFile = new Set<number>();
    const gate = syncGate();
    const fs: FileSystem = {
      ...nodeFileSystem,
      async fdatasync(fd) {
        await gate.pass();
        await nodeFileSystem.fdatasync(fd);
        events.push('fdatasync');
      },
      async open(path, mode) {
        const fd = await nodeFileSystem.open(path, mode);
        if (path === file) ofFile.add(fd);
        return fd;
      },
      async close(fd) {
        if (ofFile.delete(fd)) events.push('close');
        return nodeFileSystem.close(fd);
      },
    };
    return { fs, events, hold: gate.hold, release: gate.release };
  }

  it('close waits for the sync of a flush started before it; the flush resolves', async () => {
    const file = `${tempDir('tj-flush-close-')}/events.jsonl`;
    const held = heldFlushSync(file);
    const writer = await AppendFile.open(file, { durability: 'none', fs: held.fs });
    await writer.appendRecord(eventRecord(0, 'kept'));
    const syncStarted = held.hold();
    const flushed = writer.flush();
    await syncStarted;
    const closed = writer.close();
    // Close has everything it needs but the flush's sync: it must not close the descriptor under it.
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(held.events).toEqual([]);
    held.release();
    await expect(flushed).resolves.toBeUndefined();
    await expect(closed).resolves.toBeUndefined();
    expect(held.events).toEqual(['fdatasync', 'close']);
    const contents = await readAll(file);
    expect(contents.findings).toEqual([]);
    expect(contents.records).toHaveLength(1);
  });

  it('a flush called while close runs answers with the close, and syncs no closed descriptor', async () => {
    const file = `${tempDir('tj-flush-close-')}/events.jsonl`;
    const held = heldFlushSync(file);
    const writer = await AppendFile.open(file, { durability: 'none', fs: held.fs });
    await writer.appendRecord(eventRecord(0, 'kept'));
    const closed = writer.close();
    const flushed = writer.flush();
    await expect(closed).resolves.toBeUndefined();
    await expect(flushed).resolves.toBeUndefined();
    // Close made the line durable with its fsync; nothing synced after the descriptor was closed.
    expect(held.events).toEqual(['close']);
  });
});
