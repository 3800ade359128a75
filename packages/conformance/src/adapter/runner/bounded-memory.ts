import { rmSync } from 'node:fs';
import { compareStoreObservation } from '../../fixtures/run-store-fixtures.js';
import { AdapterProcess } from '../process.js';
import { processGroupPeakBytes, processTableAvailable } from '../process-group.js';
import type { StartResult } from '../protocol.js';
import { adapterReading } from './adapter-reading.js';
import { freshDir } from './fresh-dir.js';
import { type LargeFamily, type LargeShape, writeLargeStore } from './large-store.js';
import type { CheckRecorder } from './record.js';
import type { Session } from './session.js';

// `reader/bounded-memory` (TJ-FRAME-033): a reader reads JSONL as a stream, so its memory follows the line-size limit
// and what it derives, not the file size. The harness reads two stores of the same shape, one four times the size of
// the other, in a fresh adapter process, and compares the peak memory of the adapter's process group during each: a
// reader that streams needs about the same for both, one that holds what it read needs several times more.
// `reader/bounded-memory-tiny-records` does the same with stores of many records of 60 to 100 bytes: the bulky stores
// hold too few records for state of tens of bytes kept per record for the read (an index of every line's offset) to
// reach the allowance, the tiny ones hold about ten times as many per byte (issue 37). State dropped at the end of each
// file peaks with one file, not the store, and can stay under the allowance of a store of three files; measuring per
// file would need an allowance below the reference adapter's own noise (what its garbage collector holds at a time).

/** Why the check was skipped: a claim it leaves unproven. */
export const PROC_MISSING =
  "the adapter's memory cannot be measured here (/proc with VmHWM is Linux only): whether the reader streams is NOT PROVEN. Run the kit on Linux.";

/** The size of each file of the smaller store; the larger store's files are four times as large. */
export const SMALL_FILE_BYTES = 8 * 1024 * 1024;

/** The share of the extra bytes the larger store may add to the peak memory. */
const ALLOWED_SHARE = 1 / 4;

/** How often the group's memory is sampled during a read, so that a process started for one read is seen too. */
const SAMPLE_MS = 20;

/** Reads the store at `root` and returns the answer and the group's peak memory in bytes, sampled during the read. */
async function measuredRead(process: AdapterProcess, root: string) {
  const group = process.pid as number;
  let peak = processGroupPeakBytes(group);
  const timer = setInterval(() => {
    peak = Math.max(peak, processGroupPeakBytes(group));
  }, SAMPLE_MS);
  try {
    const reading = await adapterReading(process, root, undefined, false);
    peak = Math.max(peak, processGroupPeakBytes(group));
    return { reading, peak };
  } finally {
    clearInterval(timer);
  }
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** The two checks, by the shape of the records that make up their stores' bulk. */
const CHECKS: readonly { readonly id: string; readonly shape: LargeShape; readonly description: string }[] = [
  {
    id: 'reader/bounded-memory',
    shape: 'bulky',
    description:
      "reading a store four times as large raises the reader's peak memory by less than a quarter of the extra bytes",
  },
  {
    id: 'reader/bounded-memory-tiny-records',
    shape: 'tiny',
    description:
      "reading a store of tiny records four times as large raises the reader's peak memory by less than a quarter of the extra bytes",
  },
];

/** `reader/bounded-memory` and `reader/bounded-memory-tiny-records`. */
export async function boundedMemoryCheck(
  session: Session,
  claims: StartResult,
  recorder: CheckRecorder,
): Promise<void> {
  for (const check of CHECKS) await boundedMemoryOf(check, session, claims, recorder);
}

async function boundedMemoryOf(
  { id, shape, description }: (typeof CHECKS)[number],
  session: Session,
  claims: StartResult,
  recorder: CheckRecorder,
): Promise<void> {
  await recorder.record(id, description, 'reader', ['TJ-FRAME-033'], async () => {
    const families = (['turn', 'event', 'run'] as const).filter((f): f is LargeFamily => claims.families.includes(f));
    if (families.length === 0) return { skip: 'no JSONL family (turn, event, run) claimed' };
    if (!processTableAvailable()) return { skip: PROC_MISSING, unproven: true };
    const roots = [freshDir('tj-conf-memory-'), freshDir('tj-conf-memory-')];
    // A process of its own: the session's has read other stores (a 16 MiB line among them), and its peak shows that.
    // Large stores take longer than a request usually may.
    const process = AdapterProcess.spawn(session.command, { timeoutMs: Math.max(4 * session.timeoutMs, 120_000) });
    try {
      await process.request('start', { protocol: 1 });
      const failures: string[] = [];
      const peaks: number[] = [];
      const sizes: { bytes: number; lines: number }[] = [];
      for (const [index, root] of roots.entries()) {
        const { bytes, lines, expected } = writeLargeStore(
          root,
          families,
          SMALL_FILE_BYTES * (index === 0 ? 1 : 4),
          shape,
        );
        const { reading, peak } = await measuredRead(process, root);
        // Removed before the larger store is written: two of them need not fit on the disk at once.
        rmSync(root, { recursive: true, force: true });
        const wrong = compareStoreObservation({ expect: expected }, { ...reading, replay: [] });
        // A reader that gave up on the large files would use little memory: its answer must be right first.
        failures.push(...wrong.map((failure) => `store of ${mib(bytes)}: ${failure}`));
        peaks.push(peak);
        sizes.push({ bytes, lines });
      }
      if (failures.length > 0) return { failures, situations: roots.length };
      const [smallPeak, largePeak] = peaks as [number, number];
      const [small, large] = sizes as [(typeof sizes)[number], (typeof sizes)[number]];
      const extraBytes = large.bytes - small.bytes;
      const extraLines = large.lines - small.lines;
      if (smallPeak === 0)
        return { skip: `no memory figure for the adapter's process group: ${PROC_MISSING}`, unproven: true };
      const growth = largePeak - smallPeak;
      const allowed = extraBytes * ALLOWED_SHARE;
      if (growth > allowed)
        failures.push(
          `the adapter's peak memory was ${mib(smallPeak)} reading ${mib(small.bytes)} and ${mib(largePeak)} reading ${mib(large.bytes)} (${families.join(', ')}): ${mib(growth)} more for ${mib(extraBytes)} more file (${extraLines} more lines, ${Math.round(growth / extraLines)} bytes each), above the ${mib(allowed)} a reader that streams stays under — its memory follows the file size, not the line limit and the derived state (TJ-FRAME-033)`,
        );
      return { failures, situations: roots.length };
    } finally {
      await process.stop().catch(() => process.kill());
      await process.dispose();
      for (const root of roots) rmSync(root, { recursive: true, force: true });
    }
  });
}
