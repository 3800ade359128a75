// The file store's channel (spec §19.3): the durable mark of an event log, and what a failure to write it does — the
// announcement fails (its caller reports it), and the next announcement writes the mark, instead of every later one
// failing with the first error.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { openFileRecordStore } from '@turnjournal/writer/file-store';
import { type FileSystem, nodeFileSystem } from '@turnjournal/writer/file-system';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/temp.js';

describe('the durable mark (TJ-STORE-007, TJ-STORE-010)', () => {
  it('is written after an announcement, read by another store on the root, and never goes back within a process', async () => {
    const root = tempDir();
    mkdirSync(join(root, 's1'));
    const owner = openFileRecordStore({ root });
    const other = openFileRecordStore({ root });
    expect(await other.channel.durableSeq('s1')).toBe(-1);
    await owner.channel.publish('s1', 7);
    expect(await other.channel.durableSeq('s1')).toBe(7);
    await owner.channel.publish('s1', 3);
    expect(await other.channel.durableSeq('s1'), 'an older announcement does not move the mark back').toBe(7);
    await owner.channel.publish('s1', 12);
    expect(await other.channel.durableSeq('s1')).toBe(12);
    await owner.channel.release('s1');
  });

  it('is opened again after an open that failed: one failed announcement, not every later one', async () => {
    const root = tempDir();
    let failures = 1;
    const fs: FileSystem = {
      ...nodeFileSystem,
      open: (path, mode) => {
        if (path.endsWith('.durable') && failures > 0) {
          failures -= 1;
          return Promise.reject(Object.assign(new Error('EIO: simulated'), { code: 'EIO' }));
        }
        return nodeFileSystem.open(path, mode);
      },
    };
    const owner = openFileRecordStore({ root, fs });
    await expect(owner.channel.publish('s1', 1)).rejects.toMatchObject({ code: 'EIO' });
    await owner.channel.publish('s1', 2);
    expect(await openFileRecordStore({ root }).channel.durableSeq('s1')).toBe(2);
    await owner.channel.release('s1');
  });
});
