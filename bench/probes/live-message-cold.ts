/**
 * What the live hub's own work for one committed message (`run.toolResult` up to the point where it waits, the sync
 * made a no-op) costs when messages come back to back, and when each comes after the thread waited: for an
 * `fdatasync` of another file through the thread pool (what a real committed message waits for), or for a 1 ms timer.
 * The instructions are the same in the three series; what differs is how cold the caches are when they run. Not a
 * figure of `pnpm bench`: `npx tsx bench/probes/live-message-cold.ts [messages]`.
 */
import { closeSync, fdatasync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import * as live from '../../packages/live/dist/index.js';
import { type FileSystem, nodeFileSystem } from '../../packages/writer/dist/fs/file-system.js';
import { withRealTwins } from '../lib/timed-file-system.js';

const messages = Number(process.argv[2] ?? 2000);
const warmUp = 600;
const dir = mkdtempSync(join(tmpdir(), 'tj-live-cold-'));
// The real file system with a sync that does nothing: the hub's work alone, its writes still real.
const noSync: FileSystem = withRealTwins({ ...nodeFileSystem, fdatasync: () => Promise.resolve() });
const otherFd = openSync(join(dir, 'other.jsonl'), 'a');
const waits: Record<string, () => Promise<void>> = {
  'back to back': () => Promise.resolve(),
  'after an fdatasync of another file': () =>
    new Promise<void>((resolve, reject) => {
      writeSync(otherFd, 'x\n');
      fdatasync(otherFd, (error) => (error ? reject(error) : resolve()));
    }),
  'after a 1 ms timer': () => new Promise<void>((resolve) => setTimeout(resolve, 1)),
};
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
for (const [name, wait] of Object.entries(waits)) {
  const hub = live.openConversationHub({ root: join(dir, name.replaceAll(' ', '-')), retention: false, fs: noSync });
  const session = await hub.session('s1');
  const sent = await session.send({ requestId: 'r1', content: 'hi' });
  if (!sent.created) throw new Error('expected a new run');
  const own: number[] = [];
  for (let i = 0; i < messages + warmUp; i += 1) {
    const id = String(i).padStart(6, '0');
    await wait();
    const begin = performance.now();
    const committed = sent.run.toolResult({ toolCallId: `c${id}`, output: `result ${id}: ${'y'.repeat(200)}` });
    const returned = performance.now();
    await committed;
    if (i >= warmUp) own.push((returned - begin) * 1000);
  }
  await sent.run.done();
  await hub.close();
  console.log(`${name.padEnd(36)} ${median(own).toFixed(1).padStart(6)} µs (median of ${messages})`);
}
closeSync(otherFd);
rmSync(dir, { recursive: true, force: true });
