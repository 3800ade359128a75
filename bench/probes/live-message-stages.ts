/**
 * Where the time of one committed message through the live hub goes (`run.toolResult`), against the non-blocking
 * floor of the same bytes (`writeSync`, then `fdatasync` through the thread pool). A file system that wraps the real
 * one stamps the call, the issue of the sync and its completion. Run: `npx tsx bench/probes/live-message-stages.ts`.
 */
import { closeSync, fdatasync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import * as live from '../../packages/live/dist/index.js';
import { timedFileSystem } from '../lib/timed-file-system.js';

const messages = Number(process.argv.find((a) => a.startsWith('--messages='))?.slice(11) ?? 2000);
const dir = mkdtempSync(join(tmpdir(), 'tj-live-stages-'));
const { fs: timed, stamps } = timedFileSystem();

const hub = live.openConversationHub({ root: dir, retention: false, fs: timed });
const session = await hub.session('s1');
const sent = await session.send({ requestId: 'r1', content: 'hi' });
if (!sent.created) throw new Error('expected a new run');
const floorFd = openSync(join(dir, 'floor.jsonl'), 'a');
const line = Buffer.alloc(753, 0x61);
line[752] = 0x0a;
const pre: number[] = [];
const toWrite: number[] = [];
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
for (let n = 0; n < messages + 20; n += 1) {
  const id = String(n).padStart(6, '0');
  const order = n % 2 === 0;
  for (const which of order ? [0, 1] : [1, 0]) {
    if (which === 0) {
      const w0 = stamps.writes;
      const t0 = performance.now();
      await sent.run.toolResult({ toolCallId: `c${id}`, output: `result ${id}: ${'y'.repeat(200)}` });
      const t1 = performance.now();
      writesPerMessage += stamps.writes - w0;
      if (n >= 20) {
        pre.push((stamps.syncIssued - t0) * 1000);
        toWrite.push((stamps.writeDone - t0) * 1000);
        sync.push((stamps.syncDone - stamps.syncIssued) * 1000);
        post.push((t1 - stamps.syncDone) * 1000);
        total.push((t1 - t0) * 1000);
      }
    } else {
      const t0 = performance.now();
      await floor();
      const t1 = performance.now();
      if (n >= 20) {
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
console.log(`call → write done: ${f(med(toWrite))} µs median`);
console.log(`hub    ${f(med(pre))}  ${f(med(sync))}  ${f(med(post))}  ${f(med(total))}`);
console.log(`floor  ${f(med(fPre))}  ${f(med(fSync))}  ${f(med(fPost))}  ${f(med(fTotal))}`);
console.log(`hub99  ${f(p99(pre))}  ${f(p99(sync))}  ${f(p99(post))}  ${f(p99(total))}`);
console.log(`flr99  ${f(p99(fPre))}  ${f(p99(fSync))}  ${f(p99(fPost))}  ${f(p99(fTotal))}`);
