import { describe, expect, it } from 'vitest';
import { scanEventRuns } from '../../src/event/scan-event-runs.js';
import { seekEventSeq } from '../../src/event/seek-event-seq.js';
import type { JournalSource } from '../../src/framing/read-journal.js';
import { ev, line } from './event-log.js';

function memory(content: Buffer): JournalSource {
  return {
    read: async (buffer, offset, length, position) => {
      const n = Math.max(0, Math.min(length, content.length - position));
      buffer.set(content.subarray(position, position + n), offset);
      return n;
    },
  };
}

// A log long enough that the seek bisects (over 64 KiB), with runs for the run scan.
const records = Array.from({ length: 1500 }, (_, seq) =>
  seq % 100 === 0
    ? ev(seq, 'chat.started', { request_id: `r${seq}` })
    : seq % 100 === 99
      ? ev(seq, 'chat.done', { request_id: `r${seq - 99}` })
      : ev(seq, 'message_append', { message: { role: 'user', content: `message number ${seq}` } }),
);
const text = records.map(line).join('');
const offsets = records.map((_, seq) => Buffer.byteLength(records.slice(0, seq).map(line).join('')));
const withSpace = Buffer.concat([Buffer.from(text), Buffer.alloc(64 * 1024)]);

describe('event-log readers that take the file size as a bound, over pre-allocated space (TJ-FRAME-036)', () => {
  it('seekEventSeq never answers after the record it looks for when the size counts the space', async () => {
    for (const target of [0, 1, 700, 1498, 1499, 1500]) {
      const start = await seekEventSeq(target, { source: memory(withSpace), size: withSpace.length });
      expect(start).toBeLessThanOrEqual(offsets[target] ?? text.length);
      // Every record before the answer has a smaller seq.
      const before = text
        .slice(0, start)
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l).seq as number);
      expect(before.every((seq) => seq < target)).toBe(true);
    }
  });

  it('scanEventRuns finds the same runs whether its end counts the space or not', async () => {
    const plain = await scanEventRuns({ source: memory(Buffer.from(text)), end: text.length, chunkBytes: 4096 });
    const spaced = await scanEventRuns({ source: memory(withSpace), end: withSpace.length, chunkBytes: 4096 });
    expect([...spaced.entries()]).toEqual([...plain.entries()]);
    expect(spaced.size).toBe(15);
  });
});
