// Coverage of TJ-FRAME-033 (spec §3.7): the reference reader streams. Measured in a child process run with
// --expose-gc, over virtual sources that are never held in memory, so the numbers are retained memory, not garbage.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const MiB = 1024 * 1024;

interface ChildReport {
  readonly oversized: {
    readonly lineBytes: number;
    readonly growth: number;
    readonly bytes: number;
    readonly size: number;
    readonly maxRead: number;
    readonly records: number[];
    readonly findings: string[];
  };
  readonly early: { readonly size: number; readonly bytesBeforeFirstRecord: number };
}

describe('the reader streams (spec §3.7)', () => {
  it('reads a 256 MiB line and a 1 GiB file with memory bounded by the line-size limit, not the file size (TJ-FRAME-033)', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--expose-gc', join(import.meta.dirname, 'stream-child.mjs')],
      { maxBuffer: MiB, timeout: 120_000 },
    );
    const report = JSON.parse(stdout) as ChildReport;
    const { oversized, early } = report;
    // The oversized line is skipped and reported, and the records after it are read: the whole source was consumed.
    expect(oversized.findings).toEqual(['oversized_line']);
    expect(oversized.records).toEqual([1, 2]);
    expect(oversized.bytes).toBe(oversized.size);
    // Retained memory while reading a 256 MiB line stays within a few times the 16 MiB default limit; a reader that
    // buffered the line whole would hold at least 256 MiB.
    expect(oversized.growth, `retained memory grew by ${(oversized.growth / MiB).toFixed(1)} MiB`).toBeLessThan(
      64 * MiB,
    );
    expect(oversized.maxRead).toBeLessThanOrEqual(16 * MiB);
    // The first records of a 1 GiB file come after a few reads, long before the end of the file.
    expect(early.size).toBeGreaterThan(1000 * MiB);
    expect(early.bytesBeforeFirstRecord).toBeLessThanOrEqual(16 * MiB);
  }, 120_000);
});
