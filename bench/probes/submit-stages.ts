/**
 * Where the tail of a durable `submit` goes (issue 14, p99 against SQLite): each `submit({ content, turnId })` is cut
 * at the issue of its `fdatasync` and at the sync's completion, through a file system that wraps the real one, and
 * sampled in a random order with the non-blocking floor of the same 414 bytes (`writeSync`, then `fdatasync` through
 * the thread pool). GC pauses are recorded to tell them apart. Not a figure of `pnpm bench`:
 * `npx tsx bench/probes/submit-stages.ts [samples]`.
 */
import { closeSync, fdatasync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { openTurnJournal } from '../../packages/writer/dist/index.js';
import { timedFileSystem } from '../lib/timed-file-system.js';

interface Sample {
  readonly begin: number;
  /** Microseconds from the call to the issue of the sync, of the sync, and from its end to the call's. */
  readonly pre: number;
  readonly sync: number;
  readonly post: number;
  readonly total: number;
}

const samples = Number(process.argv[2] ?? 3000);
const dir = mkdtempSync(join(tmpdir(), 'tj-submit-stages-'));
const { fs: timed, stamps } = timedFileSystem();
const pauses: [number, number][] = [];
const observer = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) pauses.push([entry.startTime, entry.duration]);
});
observer.observe({ entryTypes: ['gc'] });

const journal = await openTurnJournal({ dir, sessionId: 's1', fs: timed });
const floorFd = openSync(join(dir, 'floor.jsonl'), 'a');
const line = Buffer.alloc(414, 0x61);
line[413] = 0x0a;
const content = 'x'.repeat(300);
const subject: Sample[] = [];
const floor: Sample[] = [];
for (let i = 0; i < samples + 20; i += 1) {
  for (const which of Math.random() < 0.5 ? [0, 1] : [1, 0]) {
    const begin = performance.now();
    if (which === 0) await journal.submit({ content, turnId: `t${i}` });
    else
      await new Promise<void>((resolve, reject) => {
        writeSync(floorFd, line);
        stamps.syncIssued = performance.now();
        fdatasync(floorFd, (error) => {
          stamps.syncDone = performance.now();
          if (error) reject(error);
          else resolve();
        });
      });
    const end = performance.now();
    const sample = {
      begin,
      pre: (stamps.syncIssued - begin) * 1000,
      sync: (stamps.syncDone - stamps.syncIssued) * 1000,
      post: (end - stamps.syncDone) * 1000,
      total: (end - begin) * 1000,
    };
    if (i >= 20) (which === 0 ? subject : floor).push(sample);
  }
}
closeSync(floorFd);
await journal.close();
observer.disconnect();
rmSync(dir, { recursive: true, force: true });

const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * q))] as number;
const row = (name: string, series: Sample[]) => {
  const parts = (['pre', 'sync', 'post', 'total'] as const).map(
    (key) =>
      `${key} ${quantile(
        series.map((s) => s[key]),
        0.5,
      ).toFixed(0)} / ${quantile(
        series.map((s) => s[key]),
        0.99,
      ).toFixed(0)}`,
  );
  console.log(`${name.padEnd(7)} ${parts.join(', ')} µs (median / p99)`);
};
row('submit', subject);
row('floor', floor);
const slow = subject.filter((s) => s.pre > 250);
const inPause = slow.filter((s) =>
  pauses.some(([start, duration]) => start < s.begin + s.pre / 1000 && start + duration > s.begin),
).length;
console.log(
  `submits whose work before the sync took over 250 µs: ${slow.length} of ${subject.length}, ${inPause} of them with a GC pause in it`,
);
