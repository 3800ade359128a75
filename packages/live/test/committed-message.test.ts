// What one committed message costs the event log (spec §18.2, TJ-LIVE-006): a tool result is a `tool.result` and
// its `message_append`, made durable together before `toolResult()` resolves. Counted through the file-system layer:
// one write of both lines and one fdatasync, and the write lands in the log's pre-allocated space (spec §11.6), so
// the sync commits no new file size — the cost the durable-append floor of the benchmarks does not get.
import { SimulatedFileSystem } from '@turnjournal/conformance';
import { openConversationHub } from '@turnjournal/live';
import type { FileSystem } from '@turnjournal/writer/file-system';
import { describe, expect, it } from 'vitest';

const DEAD = { statusOf: (text: string | undefined) => (text === undefined ? ('none' as const) : ('stale' as const)) };
const LOG = '/s/s1/events.jsonl';

interface LogCalls {
  writes: number;
  /** Writes that ended past the file's length before them: each makes the next sync commit a new size. */
  growing: number;
  fdatasyncs: number;
  fsyncs: number;
}

/** `base` with the event log's writes and syncs counted, and the writes that grew the file told apart. */
function counting(base: FileSystem): { fs: FileSystem; calls: LogCalls } {
  const paths = new Map<number, string>();
  const calls: LogCalls = { writes: 0, growing: 0, fdatasyncs: 0, fsyncs: 0 };
  const fs: FileSystem = {
    ...base,
    async open(path, mode) {
      const fd = await base.open(path, mode);
      paths.set(fd, path);
      return fd;
    },
    async write(fd, buffer, offset, length, position, options) {
      if (paths.get(fd) !== LOG) return base.write(fd, buffer, offset, length, position, options);
      const before = (await base.fstat(fd)).size;
      calls.writes += 1;
      if (position + length > before) calls.growing += 1;
      return base.write(fd, buffer, offset, length, position, options);
    },
    fdatasync(fd) {
      if (paths.get(fd) === LOG) calls.fdatasyncs += 1;
      return base.fdatasync(fd);
    },
    fsync(fd) {
      if (paths.get(fd) === LOG) calls.fsyncs += 1;
      return base.fsync(fd);
    },
  };
  return { fs, calls };
}

describe('a committed message (TJ-LIVE-006)', () => {
  it('costs one write into pre-allocated space and one fdatasync of the event log', async () => {
    const sim = new SimulatedFileSystem();
    const counted = counting(sim.view());
    const hub = openConversationHub({ root: '/s', fs: counted.fs, lock: DEAD, retention: false });
    const session = await hub.session('s1');
    const sent = await session.send({ requestId: 'r1', content: 'hi' });
    if (!sent.created) throw new Error('expected a new run');
    await sent.run.toolResult({ toolCallId: 'w0', output: 'warm' });
    const before = { ...counted.calls };
    const messages = 40;
    for (let n = 0; n < messages; n += 1)
      await sent.run.toolResult({ toolCallId: `c${n}`, output: `result ${n}: ${'y'.repeat(200)}` });
    const writes = counted.calls.writes - before.writes;
    const fdatasyncs = counted.calls.fdatasyncs - before.fdatasyncs;
    // A checkpoint (every 50 records by default) goes out with the message that brings it due, in the same write.
    expect(writes).toBe(messages);
    expect(fdatasyncs).toBe(messages);
    expect(counted.calls.fsyncs - before.fsyncs, 'the data and size, not the modification time').toBe(0);
    // The space grows with the file (about as much as it holds, at most 64 KiB): 40 messages of ~740 bytes grow it
    // a few times, and every other write overwrites space the file already has.
    expect(counted.calls.growing - before.growing).toBeLessThanOrEqual(4);
    await sent.run.done();
    await hub.close();
    // Closed, the file holds only lines (TJ-DUR-034).
    expect(sim.peek(LOG)?.at(-1)).toBe(0x0a);
  });
});
