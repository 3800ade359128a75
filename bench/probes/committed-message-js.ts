/**
 * The JavaScript of one committed message through the live hub (`run.toolResult`) up to its write, without the disk:
 * the file system's `fdatasync` answers at once, so a CPU profile of many messages shows only the path before the
 * write (and the little after the sync). Prints the median and p90 from the call to the write's issue, and the whole
 * call. Run: `npx tsx bench/probes/committed-message-js.ts [--messages=20000]`, with `node --cpu-prof --import tsx`
 * to profile it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import * as live from '../../packages/live/dist/index.js';
import { synchronousWrite } from '../../packages/writer/dist/fs/file-system.js';
import { timedFileSystem, withRealTwins } from '../lib/timed-file-system.js';

const messages = Number(process.argv.find((a) => a.startsWith('--messages='))?.slice(11) ?? 20000);
const warmup = 2000;
// With `--idle-ms=N`, the process waits N ms between messages, as it waits for the disk in a real commit: what the
// same JavaScript costs once the CPU's caches went to other work meanwhile.
const idleMs = Number(process.argv.find((a) => a.startsWith('--idle-ms='))?.slice(10) ?? 0);
const dir = mkdtempSync(join(tmpdir(), 'tj-live-js-'));
const { fs: timed, stamps } = timedFileSystem();
// No disk wait: what is left of a message is its JavaScript and its write.
const fs = withRealTwins({ ...timed, fdatasync: () => Promise.resolve() }, synchronousWrite(timed));
const hub = live.openConversationHub({ root: dir, retention: false, fs });
const session = await hub.session('s1');
const sent = await session.send({ requestId: 'r1', content: 'hi' });
if (!sent.created) throw new Error('expected a new run');
const toWrite: number[] = [];
const whole: number[] = [];
let silent = 0;
for (let n = 0; n < messages + warmup; n += 1) {
  const id = String(n).padStart(6, '0');
  if (idleMs > 0) await new Promise((resolve) => setTimeout(resolve, idleMs));
  const t0 = performance.now();
  const w0 = stamps.writes;
  await sent.run.toolResult({ toolCallId: `c${id}`, output: `result ${id}: ${'y'.repeat(200)}` });
  const t1 = performance.now();
  // A message whose lines went out with an earlier write (a checkpoint's) has no write of its own to time.
  if (stamps.writes === w0) silent += 1;
  else if (n >= warmup) {
    toWrite.push((stamps.writeStart - t0) * 1000);
    whole.push((t1 - t0) * 1000);
  }
}
await sent.run.done();
await hub.close();
rmSync(dir, { recursive: true, force: true });
const at = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * q)] as number;
console.log(
  `messages ${messages} (${silent} without a write of their own): call → write issued ${at(toWrite, 0.5).toFixed(1)} µs median, ${at(toWrite, 0.9).toFixed(1)} p90; whole call ${at(whole, 0.5).toFixed(1)} µs median, ${at(whole, 0.9).toFixed(1)} p90`,
);
