// A `none`-mode flush whose lines are still queued (a live session's committed message: append, then flush at once)
// gets its fdatasync issued in the synchronous run of the write that empties the queue, not a few promise reactions
// later; and a sync issued that way is used only for the writes it covers.
import { writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  AppendFile,
  type FileSystem,
  flushAfter,
  idleForFlush,
  nodeFileSystem,
  openEventLog,
  withSynchronousWrite,
} from '../support/internals.js';
import { eventRecord } from '../support/journal.js';
import { tempDir } from '../support/temp.js';

/**
 * The real file system with a synchronous write twin, logging its writes and syncs; after each write a microtask logs
 * `tick`, so a sync logged before that `tick` was issued in the write's synchronous run.
 */
function tickingFileSystem() {
  const log: string[] = [];
  const fs: FileSystem = {
    ...nodeFileSystem,
    fdatasync: (fd) => {
      log.push('fdatasync');
      return nodeFileSystem.fdatasync(fd);
    },
  };
  withSynchronousWrite(fs, (fd, buffer, offset, length, position) => {
    log.push('write');
    queueMicrotask(() => log.push('tick'));
    return writeSync(fd, buffer, offset, length, position);
  });
  return { fs, log };
}

function journalPath(): string {
  return join(tempDir('tj-flush-sync-run-'), 'events.jsonl');
}

describe('the sync of a none-mode flush', () => {
  it('is issued in the synchronous run of the write it waits for', async () => {
    const { fs, log } = tickingFileSystem();
    const file = await AppendFile.open(journalPath(), { durability: 'none', fs });
    log.length = 0;
    await Promise.all([file.appendRecord(eventRecord(0)), file.flush()]);
    expect(log).toEqual(['write', 'fdatasync', 'tick']);
    await file.close();
  });

  it("is issued in the write's run for an event log's flush too (the live hub's committed message)", async () => {
    const { fs, log } = tickingFileSystem();
    const events = await openEventLog({ file: journalPath(), fs, durability: 'none' });
    await Promise.all([events.appendMessage({ role: 'user', content: 'hi' }), events.flush()]);
    log.length = 0;
    await Promise.all([events.appendMessage({ role: 'assistant', content: 'hello' }), events.flush()]);
    expect(log).toEqual(['write', 'fdatasync', 'tick']);
    await events.close();
  });

  it('is not taken for a write made after it: that write gets a sync of its own', async () => {
    const { fs, log } = tickingFileSystem();
    const file = await AppendFile.open(journalPath(), { durability: 'none', fs });
    log.length = 0;
    // The first write issues a sync for the flush waiting for it; the second comes between the flush's two steps (as
    // an event log's appender may write between them), with nobody waiting.
    const [, issued] = await Promise.all([file.appendRecord(eventRecord(0)), idleForFlush(file)]);
    await file.appendRecord(eventRecord(1));
    await file.idle();
    expect(log.filter((call) => call !== 'tick')).toEqual(['write', 'fdatasync', 'write']);
    await flushAfter(file, issued);
    expect(log.filter((call) => call !== 'tick')).toEqual(['write', 'fdatasync', 'write', 'fdatasync']);
    await file.close();
  });
});
