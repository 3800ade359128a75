/**
 * Where the time of one committed message through the live hub goes (`run.toolResult`), against the non-blocking
 * floor of the same bytes (`writeSync`, then `fdatasync` through the thread pool). A file system that wraps the real
 * one stamps the call, the issue of the sync and its completion. Run: `npx tsx bench/probes/live-message-stages.ts`.
 */
import { closeSync, fdatasync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver, performance } from 'node:perf_hooks';
import * as live from '../../packages/live/dist/index.js';
import { timedFileSystem } from '../lib/timed-file-system.js';

const messages = Number(process.argv.find((a) => a.startsWith('--messages='))?.slice(11) ?? 2000);
const dir = mkdtempSync(join(tmpdir(), 'tj-live-stages-'));
const { fs: timed, stamps } = timedFileSystem();
// Garbage collections, to tell which slow messages had one running meanwhile.
const collections: { start: number; end: number }[] = [];
const gcObserver = new PerformanceObserver((list) => {
  for (const entry of list.getEntries())
    collections.push({ start: entry.startTime, end: entry.startTime + entry.duration });
});
gcObserver.observe({ entryTypes: ['gc'] });
const gcWithin = (from: number, to: number) =>
  collections.reduce((ms, c) => ms + Math.max(0, Math.min(to, c.end) - Math.max(from, c.start)), 0) * 1000;
/** Per timed message: what it cost, and what happened meanwhile. */
const samples: { total: number; pre: number; sync: number; post: number; gc: number; writes: number; bytes: number }[] =
  [];

const hub = live.openConversationHub({ root: dir, retention: false, fs: timed });
const session = await hub.session('s1');
const sent = await session.send({ requestId: 'r1', content: 'hi' });
if (!sent.created) throw new Error('expected a new run');
const floorFd = openSync(join(dir, 'floor.jsonl'), 'a');
const line = Buffer.alloc(753, 0x61);
line[752] = 0x0a;
const pre: number[] = [];
const toWrite: number[] = [];
const toWriteStart: number[] = [];
const writeCall: number[] = [];
const sync: number[] = [];
const post: number[] = [];
const total: number[] = [];
const fPre: number[] = [];
const fSync: number[] = [];
const fPost: number[] = [];
const fTotal: number[] = [];
let fIssued = 0;
let fDone = 0;
const floor = () =>
  new Promise<void>((resolve, reject) => {
    writeSync(floorFd, line);
    fIssued = performance.now();
    fdatasync(floorFd, (error) => {
      fDone = performance.now();
      if (error) reject(error);
      else resolve();
    });
  });
let writesPerMessage = 0;
const floorGc: number[] = [];
for (let n = 0; n < messages + 20; n += 1) {
  const id = String(n).padStart(6, '0');
  const order = n % 2 === 0;
  for (const which of order ? [0, 1] : [1, 0]) {
    if (which === 0) {
      const w0 = stamps.writes;
      const b0 = stamps.bytes;
      const t0 = performance.now();
      await sent.run.toolResult({ toolCallId: `c${id}`, output: `result ${id}: ${'y'.repeat(200)}` });
      const t1 = performance.now();
      writesPerMessage += stamps.writes - w0;
      if (n >= 20) {
        pre.push((stamps.syncIssued - t0) * 1000);
        toWrite.push((stamps.writeDone - t0) * 1000);
        toWriteStart.push((stamps.writeStart - t0) * 1000);
        writeCall.push((stamps.writeDone - stamps.writeStart) * 1000);
        sync.push((stamps.syncDone - stamps.syncIssued) * 1000);
        post.push((t1 - stamps.syncDone) * 1000);
        total.push((t1 - t0) * 1000);
        samples.push({
          total: (t1 - t0) * 1000,
          pre: (stamps.syncIssued - t0) * 1000,
          sync: (stamps.syncDone - stamps.syncIssued) * 1000,
          post: (t1 - stamps.syncDone) * 1000,
          gc: gcWithin(t0, t1),
          writes: stamps.writes - w0,
          bytes: stamps.bytes - b0,
        });
      }
    } else {
      const t0 = performance.now();
      await floor();
      const t1 = performance.now();
      if (n >= 20) {
        floorGc.push(gcWithin(t0, t1));
        fPre.push((fIssued - t0) * 1000);
        fSync.push((fDone - fIssued) * 1000);
        fPost.push((t1 - fDone) * 1000);
        fTotal.push((t1 - t0) * 1000);
      }
    }
  }
}
closeSync(floorFd);
await sent.run.done();
await hub.close();
rmSync(dir, { recursive: true, force: true });
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.99)] as number;
const f = (x: number) => x.toFixed(1).padStart(7);
console.log(`messages ${messages}, writes per message ${(writesPerMessage / (messages + 20)).toFixed(2)}`);
console.log('            pre     sync     post    total   (µs; median, then p99)');
console.log(
  `call → write done: ${f(med(toWrite))} µs median (call → write issued ${f(med(toWriteStart))}, the write ${f(med(writeCall))})`,
);
console.log(`hub    ${f(med(pre))}  ${f(med(sync))}  ${f(med(post))}  ${f(med(total))}`);
console.log(`floor  ${f(med(fPre))}  ${f(med(fSync))}  ${f(med(fPost))}  ${f(med(fTotal))}`);
console.log(`hub99  ${f(p99(pre))}  ${f(p99(sync))}  ${f(p99(post))}  ${f(p99(total))}`);
console.log(`flr99  ${f(p99(fPre))}  ${f(p99(fSync))}  ${f(p99(fPost))}  ${f(p99(fTotal))}`);

// Where the slowest messages' time went: the mean of each stage over the messages at or above a quantile, against the
// same quantile of the floor, and how many of them wrote a checkpoint (more bytes than most) or had a collection.
const usual = med(samples.map((x) => x.bytes));
const histogram = [100, 150, 200, 250, 300, 400, 500, 750, 1000, 2000, 5000, Number.POSITIVE_INFINITY];
const counts = (xs: number[]) =>
  histogram.map((edge, i) => xs.filter((x) => x < edge && x >= (histogram[i - 1] ?? 0)).length);
console.log(`histogram (µs, upper edges ${histogram.join(' ')}):`);
console.log(`  hub   ${counts(total).join(' ')}`);
console.log(`  floor ${counts(fTotal).join(' ')}`);
for (const q of [0.5, 0.9, 0.99]) {
  const cut = [...samples].sort((a, b) => a.total - b.total)[Math.floor(samples.length * q)]?.total ?? 0;
  const slow = samples.filter((x) => x.total >= cut);
  const mean = (pick: (x: (typeof samples)[number]) => number) =>
    slow.reduce((sum, x) => sum + pick(x), 0) / slow.length;
  console.log(
    `hub ≥ q${q} (${slow.length}, ≥ ${cut.toFixed(0)} µs): pre ${mean((x) => x.pre).toFixed(0)}, sync ${mean((x) => x.sync).toFixed(0)}, post ${mean((x) => x.post).toFixed(0)}, gc ${mean((x) => x.gc).toFixed(0)} µs; checkpoint ${slow.filter((x) => x.bytes > 1.5 * usual).length}, writes>1 ${slow.filter((x) => x.writes > 1).length}, with gc ${slow.filter((x) => x.gc > 0).length}`,
  );
}
console.log(
  `messages with a checkpoint: ${samples.filter((x) => x.bytes > 1.5 * usual).length} of ${samples.length}; usual bytes ${usual}; with gc: ${samples.filter((x) => x.gc > 0).length}; floor samples with gc: ${floorGc.filter((x) => x > 0).length}`,
);
gcObserver.disconnect();
