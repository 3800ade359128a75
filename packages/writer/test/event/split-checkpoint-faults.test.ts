import { join } from 'node:path';
import { checkStore } from '@turnjournal/reader';
import { describe, expect, it } from 'vitest';
import { type FileSystem, nodeFileSystem, openEventLog } from '../support/internals.js';
import { tempDir } from '../support/temp.js';
import { fullFold, recordsOf } from './support.js';

const msg = (i: number) => ({ role: 'user', content: `${i} ${'x'.repeat(300)}` });
/** Whether `bytes` hold the last part of a split checkpoint. */
function holdsLastPart(bytes: Buffer): boolean {
  for (const [, part, parts] of bytes.toString('latin1').matchAll(/"part":(\d+),"parts":(\d+)/g))
    if (Number(part) === Number(parts) - 1) return true;
  return false;
}

/**
 * The real file system, except that the first write holding the last part of a split checkpoint is torn: half of it
 * lands, then ENOSPC. A writer that wrote the parts one by one has written the others already.
 */
function tearFirstPartWrite(): { fs: FileSystem; torn: () => boolean } {
  let torn = false;
  const fs: FileSystem = {
    ...nodeFileSystem,
    write: async (fd, buffer, offset, length, position) => {
      if (torn || !holdsLastPart(Buffer.from(buffer.buffer, buffer.byteOffset + offset, length)))
        return nodeFileSystem.write(fd, buffer, offset, length, position);
      torn = true;
      await nodeFileSystem.write(fd, buffer, offset, Math.floor(length / 2), position);
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28 });
    },
  };
  return { fs, torn: () => torn };
}

describe('a split checkpoint under a failed write (TJ-DUR-023, TJ-REPLAY-019)', () => {
  it('leaves none of its parts when the write that carries them fails, and the next append writes it whole', async () => {
    const file = join(tempDir(), 'events.jsonl');
    const { fs, torn } = tearFirstPartWrite();
    const log = await openEventLog({ file, fs, durability: 'every', checkpointInterval: 5, maxLineBytes: 4096 });
    let i = 0;
    while (!torn() && i < 500) await log.appendMessage(msg(i++));
    await log.idle();
    expect(torn()).toBe(true);
    expect(log.checkpointFailure).toMatchObject({ code: 'write_failed' });
    expect(recordsOf(file).filter((r) => r.type === 'checkpoint.part')).toEqual([]);
    await log.appendMessage(msg(i++));
    await log.idle();
    expect(log.checkpointFailure).toBeNull();
    await log.close();
    const records = recordsOf(file);
    expect(records.filter((r) => r.type === 'checkpoint.part').length).toBeGreaterThan(1);
    expect((await checkStore([file])).findings.map((f) => f.code)).not.toContain('incomplete_checkpoint');
    expect((await fullFold(file)).messages).toHaveLength(i);
  });
});
