import { describe, expect, it } from 'vitest';
import { shortWriteFailures } from '../../../src/adapter/runner/writer/short-write.js';

const line = (seq: number) => `${JSON.stringify({ version: 1, x_tj_seq: seq, pad: 'x'.repeat(20) })}\n`;
const half = (seq: number) => line(seq).slice(0, 20);

describe('what writer/short-write accepts in the file (TJ-DUR-002, TJ-DUR-023)', () => {
  it('accepts a refused append truncated away, with the next one appended or refused', () => {
    expect(shortWriteFailures(line(0) + line(1) + line(3), [true, true, false, true])).toEqual([]);
    expect(shortWriteFailures(line(0) + line(1), [true, true, false, false])).toEqual([]);
  });

  it('fails an acknowledged half line (no retry after the short write)', () => {
    const failures = shortWriteFailures(line(0) + line(1) + half(2) + line(3), [true, true, true, true]);
    expect(failures.join('\n')).toContain('TJ-DUR-002');
  });

  it('fails a refused append whose half line stayed, under the next record or at the end', () => {
    expect(shortWriteFailures(line(0) + line(1) + half(2) + line(3), [true, true, false, true]).join('\n')).toContain(
      'TJ-DUR-023',
    );
    expect(shortWriteFailures(line(0) + line(1) + half(2), [true, true, false, false]).join('\n')).toContain(
      'part of a line (TJ-DUR-023)',
    );
  });

  it('fails a run where the limit never reached the writer, and records the file lacks or adds', () => {
    expect(shortWriteFailures(line(0) + line(1) + line(2) + line(3), [true, true, true, true])[0]).toContain(
      'nothing was proven',
    );
    expect(shortWriteFailures(line(0) + line(3), [true, true, false, true])[0]).toContain('the acknowledged ones');
  });
});
