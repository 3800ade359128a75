/**
 * Does the company a committed message keeps change what it costs? `live-message-peers` samples the hub's
 * `run.toolResult` between a Redis `XADD`, a PostgreSQL `INSERT` and the non-blocking floor; this probe runs the same
 * loop (`sampleCommittedMessages`) with the companions chosen by `--with=` and cuts each hub sample at the issue and
 * the completion of its sync (`timedFileSystem`):
 *
 *   npx tsx bench/probes/message-company.ts --with=redis,postgres [--messages=600] [--warm-up=2000]
 *
 * Companions: `redis`, `postgres` (the figure's peers, started here), `pre` (the floor's bytes overwritten into a file
 * zero-filled and synced beforehand, as the hub's pre-allocated space is), `sleep` (a 1 ms timer: the process idles),
 * `burn` (0.25 ms of JSON work: the process stays busy). The non-blocking floor is always sampled. It prints the
 * medians, the hub's stages, and the slowest 1 % of hub samples with what they wrote and the collections meanwhile.
 */
import { closeSync, fdatasync, fsyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { FULL_WARM_UP, type MessageSeries, openFloorFile, sampleCommittedMessages } from '../lib/committed-messages.js';
import { live } from '../lib/live.js';
import { startPostgresPeer, startRedisPeer } from '../lib/peer-servers.js';
import { median, quantile } from '../lib/stats.js';
import { timedFileSystem } from '../lib/timed-file-system.js';

const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const companions = new Set((option('with') ?? '').split(',').filter((name) => name !== ''));
const known = new Set(['redis', 'postgres', 'pre', 'sleep', 'burn']);
for (const name of companions) if (!known.has(name)) throw new Error(`unknown companion ${name}: ${[...known]}`);
const messages = Number(option('messages') ?? 600);
const warmUp = Number(option('warm-up') ?? FULL_WARM_UP);

const collections: { start: number; end: number }[] = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries())
    collections.push({ start: entry.startTime, end: entry.startTime + entry.duration });
}).observe({ entryTypes: ['gc'] });
const gcWithin = (from: number, to: number) =>
  collections.reduce((ms, c) => ms + Math.max(0, Math.min(to, c.end) - Math.max(from, c.start)), 0) * 1000;

const dir = mkdtempSync(join(process.cwd(), 'bench/.work/company-'));
const redis = companions.has('redis') ? await startRedisPeer({ appendfsync: 'always' }) : null;
const postgres = companions.has('postgres') ? await startPostgresPeer() : null;
if (redis !== null && !redis.ok) throw new Error(`Redis: ${redis.reason}`);
if (postgres !== null && !postgres.ok) throw new Error(`PostgreSQL: ${postgres.reason}`);

const { fs: timed, stamps } = timedFileSystem();
const hub = live.openConversationHub({ root: join(dir, 'hub'), retention: false, fs: timed });
const floor = openFloorFile(join(dir, 'floor.jsonl'));
const names = ['floor'];
const others: MessageSeries[] = [floor.nonBlocking];
if (redis?.ok) {
  names.push('redis');
  others.push(({ text }) => redis.value.client.xadd('chat:s1', '*', 'line', text));
}
if (postgres?.ok) {
  await postgres.value.client.query(
    'CREATE TABLE chat_messages (session_id text, seq bigint, line text, PRIMARY KEY (session_id, seq))',
  );
  let seq = 0;
  names.push('postgres');
  others.push(({ text }) => {
    seq += 1;
    return postgres.value.client.query({
      name: 'insert',
      text: 'INSERT INTO chat_messages VALUES ($1, $2, $3)',
      values: ['s1', seq, text],
    });
  });
}
let preFd = -1;
if (companions.has('pre')) {
  preFd = openSync(join(dir, 'pre.jsonl'), 'w');
  writeSync(preFd, Buffer.alloc(16 * 1024 * 1024));
  fsyncSync(preFd);
  let at = 0;
  names.push('pre');
  others.push(({ line }) => {
    writeSync(preFd, line, 0, line.length, at);
    at += line.length;
    return new Promise<void>((resolve, reject) => fdatasync(preFd, (error) => (error ? reject(error) : resolve())));
  });
}
if (companions.has('sleep')) {
  names.push('sleep');
  others.push(() => new Promise((resolve) => setTimeout(resolve, 1)));
}
if (companions.has('burn')) {
  const junk = Array.from({ length: 400 }, (_, i) => ({ i, text: `x${i}`.repeat(10), pair: [i, i + 1] }));
  names.push('burn');
  others.push(() => {
    const begin = performance.now();
    let n = 0;
    while (performance.now() - begin < 0.25) n += (JSON.parse(JSON.stringify(junk)) as unknown[]).length;
    return n;
  });
}

/** Per hub sample: its stages (µs), the bytes it wrote synchronously, and the collections meanwhile. */
const hubSamples: { total: number; pre: number; sync: number; post: number; bytes: number; gc: number }[] = [];
const session = await hub.session('s1');
const sent = await session.send({ requestId: 'r1', content: 'hi' });
if (!sent.created) throw new Error('expected a new run');
await session.flush();
const timedRun = {
  async toolResult(input: { toolCallId: string; output: string }) {
    const bytes = stamps.bytes;
    const begin = performance.now();
    await sent.run.toolResult(input);
    const end = performance.now();
    hubSamples.push({
      total: (end - begin) * 1000,
      pre: (stamps.syncIssued - begin) * 1000,
      sync: (stamps.syncDone - stamps.syncIssued) * 1000,
      post: (end - stamps.syncDone) * 1000,
      bytes: stamps.bytes - bytes,
      gc: gcWithin(begin, end),
    });
  },
};
const sampled = await sampleCommittedMessages(
  timedRun,
  join(dir, 'hub', 's1', 'events.jsonl'),
  messages,
  others,
  warmUp,
);
await sent.run.done();
floor.close();
if (preFd >= 0) closeSync(preFd);
await hub.close();
if (redis?.ok) await redis.value.stop();
if (postgres?.ok) await postgres.value.stop();
rmSync(dir, { recursive: true, force: true });

const ms = (xs: number[]) => `${median(xs).toFixed(3)} / ${quantile(xs, 0.99).toFixed(2)} ms`;
const floorMs = sampled.others[0] ?? [];
console.log(
  `with [${[...companions].join(', ')}], ${messages} messages after ${warmUp} untimed, of ${sampled.messageBytes} B (median / p99)`,
);
console.log(`  hub ${ms(sampled.hub)}; ratio to the floor ${(median(sampled.hub) / median(floorMs)).toFixed(2)}`);
for (const [k, samples] of sampled.others.entries()) console.log(`  ${names[k]} ${ms(samples)}`);
// The untimed warm-up messages come first in `hubSamples`.
const timedSamples = hubSamples.slice(hubSamples.length - sampled.hub.length);
const stage = (pick: (x: (typeof timedSamples)[number]) => number) => {
  const xs = timedSamples.map(pick);
  return `${median(xs).toFixed(1)} (p90 ${quantile(xs, 0.9).toFixed(0)})`;
};
console.log(
  `  hub stages, µs: call → sync issued ${stage((x) => x.pre)}, sync ${stage((x) => x.sync)}, sync → resolved ${stage((x) => x.post)}`,
);
const usual = median(timedSamples.map((x) => x.bytes));
// Each slow sample with its index after the warm-up: the same indices slow in every run, whatever the order's seed,
// point at the hub's own life (a compile, its window filling, a checkpoint), not at the disk (bench/results/history.md,
// "The committed message's p99: the space extended with a message, and the compiler").
const slowest = [...timedSamples.entries()]
  .sort(([, a], [, b]) => b.total - a.total)
  .slice(0, Math.ceil(timedSamples.length / 100));
for (const [index, x] of slowest)
  console.log(
    `  slow #${index}: ${x.total.toFixed(0)} µs = ${x.pre.toFixed(0)} + sync ${x.sync.toFixed(0)} + ${x.post.toFixed(0)}; wrote ${x.bytes} B${x.bytes === 0 ? ' (asynchronously: over 64 KiB, a checkpoint)' : x.bytes > 2 * usual ? ' (with pre-allocated space)' : ''}; gc ${x.gc.toFixed(0)} µs`,
  );
