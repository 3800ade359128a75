/**
 * What one committed message through the live hub allocates (`run.toolResult`: a `tool.result` and its
 * `message_append`, written and `fdatasync`ed on the default, non-blocking file system), after `--warm-up` untimed
 * ones. Allocation, unlike latency, does not change with the machine's load, so this is the figure to compare
 * builds by (`TJ_BENCH_LIVE` names another build's `index.js`, as in `pnpm bench`):
 *
 *   npx tsx bench/probes/message-allocation.ts [--warm-up=2000] [--messages=2000] [--interval=256] [--top=20]
 *
 * Two series of `--messages` messages each:
 * - the first with no profiler: the bytes allocated, from the heap's use before and after each collection
 *   (`v8.GCProfiler`) and at both ends, and the young-generation collections, the semi-space fixed at 16 MiB (the
 *   probe runs itself again with `--min-semi-space-size=16 --max-semi-space-size=16` when not given them);
 * - the second under the inspector's sampling heap profiler every `--interval` bytes (on average), keeping the
 *   samples of objects that collections freed since: its sum estimates the bytes allocated again, and its sites, the
 *   top ones printed by their own bytes with the nearest frames of this repository above them, say where.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GCProfiler, getHeapStatistics } from 'node:v8';

const SEMI_SPACE_MIB = 16;
const fixed = `--max-semi-space-size=${SEMI_SPACE_MIB}`;
if (!process.execArgv.includes(fixed)) {
  // The young generation's size decides how often it is collected: fixed, so that runs compare.
  const again = spawnSync(
    process.execPath,
    [...process.execArgv, `--min-semi-space-size=${SEMI_SPACE_MIB}`, fixed, ...process.argv.slice(1)],
    { stdio: 'inherit' },
  );
  process.exit(again.status ?? 1);
}

const { live, LIVE_PATH } = await import('../lib/live.js');
const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const warmUp = Number(option('warm-up') ?? 2000);
const messages = Number(option('messages') ?? 2000);
const interval = Number(option('interval') ?? 256);
const top = Number(option('top') ?? 20);
const repository = fileURLToPath(new URL('../../', import.meta.url));

mkdirSync(join(repository, 'bench/.work'), { recursive: true });
const dir = mkdtempSync(join(repository, 'bench/.work/allocation-'));
const hub = live.openConversationHub({ root: dir, retention: false });
const session = await hub.session('s1');
const sent = await session.send({ requestId: 'r1', content: 'hi' });
if (!sent.created) throw new Error('expected a new run');
const { run } = sent;
let sentSoFar = 0;
/** `count` committed messages of the shape `live-message-peers` samples (753 bytes for the two lines). */
async function commit(count: number): Promise<void> {
  for (let end = sentSoFar + count; sentSoFar < end; sentSoFar += 1) {
    const id = String(sentSoFar).padStart(6, '0');
    await run.toolResult({ toolCallId: `c${id}`, output: `result ${id}: ${'y'.repeat(200)}` });
  }
}

await commit(warmUp);

// One series with the profiler off: every byte allocated, from the heap's use before and after each collection (V8's
// own figures, no sampling), and the young-generation collections among them.
const gcProfiler = new GCProfiler();
const usedAtStart = getHeapStatistics().used_heap_size;
gcProfiler.start();
await commit(messages);
const usedAtEnd = getHeapStatistics().used_heap_size;
const collections = gcProfiler.stop()?.statistics ?? [];
let allocated = 0;
let usedAfterLast = usedAtStart;
for (const collection of collections) {
  allocated += collection.beforeGC.heapStatistics.usedHeapSize - usedAfterLast;
  usedAfterLast = collection.afterGC.heapStatistics.usedHeapSize;
}
allocated += usedAtEnd - usedAfterLast;
const scavenges = collections.filter((collection) => collection.gcType === 'Scavenge').length;

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  callFrame: CallFrame;
  selfSize: number;
  children: ProfileNode[];
}

const inspector = new Session();
inspector.connect();
await inspector.post('HeapProfiler.startSampling', {
  samplingInterval: interval,
  includeObjectsCollectedByMajorGC: true,
  includeObjectsCollectedByMinorGC: true,
});
await commit(messages);
const { profile } = (await inspector.post('HeapProfiler.stopSampling')) as { profile: { head: ProfileNode } };
inspector.disconnect();
await run.done();
await hub.close();
rmSync(dir, { recursive: true, force: true });

const where = (frame: CallFrame): string => {
  const file = frame.url.startsWith('file://') ? relative(repository, fileURLToPath(frame.url)) : frame.url;
  return `${frame.functionName || '(anonymous)'} ${file}:${frame.lineNumber + 1}`;
};
const ours = (frame: CallFrame): boolean => frame.url.includes('/packages/') && !frame.url.includes('/node_modules/');
/** Own bytes per site (a function of the repository or the runtime), with the repository's frames above it. */
const sites = new Map<string, { bytes: number; callers: Map<string, number> }>();
let total = 0;
const walk = (node: ProfileNode, stack: CallFrame[]): void => {
  total += node.selfSize;
  if (node.selfSize > 0) {
    const key = where(node.callFrame);
    const site = sites.get(key) ?? { bytes: 0, callers: new Map<string, number>() };
    site.bytes += node.selfSize;
    const above = stack
      .filter(ours)
      .slice(-3)
      .reverse()
      .map((frame) => frame.functionName || '(anonymous)')
      .join(' < ');
    site.callers.set(above, (site.callers.get(above) ?? 0) + node.selfSize);
    sites.set(key, site);
  }
  for (const child of node.children) walk(child, [...stack, node.callFrame]);
};
walk(profile.head, []);

const perMessage = (bytes: number) => bytes / messages;
console.log(
  `${relative(repository, LIVE_PATH)}: ${messages} committed messages after ${warmUp} untimed, sampled every ${interval} B`,
);
console.log(
  `  allocated per message: ${perMessage(allocated).toFixed(0)} B from the heap's use around each collection (profiler off; ${scavenges} young-generation collections, ${((scavenges * 10000) / messages).toFixed(1)} per 10,000 messages, semi-space ${SEMI_SPACE_MIB} MiB), ${perMessage(total).toFixed(0)} B from the sampling heap profile (the next ${messages} messages)`,
);
console.log(`  top ${top} sites by own bytes per message, with the repository's nearest frames above them:`);
for (const [key, site] of [...sites].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, top)) {
  const [caller] = [...site.callers].sort((a, b) => b[1] - a[1]);
  console.log(
    `  ${perMessage(site.bytes).toFixed(0).padStart(6)} B  ${key}${caller?.[0] ? `  ← ${caller[0]} (${perMessage(caller[1]).toFixed(0)} B)` : ''}`,
  );
}
