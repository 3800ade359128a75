/**
 * Reconnect replay and cold open on a large session (issue 39), for before/after comparisons of builds:
 * `npx tsx --expose-gc bench/probes/live-replay.ts --dir=bench/.work/replay-probe [--records=1000000] [--samples=41]`.
 * Not a figure of `pnpm bench` (`live-replay-peers` is): it writes the session's log once into `--dir` and keeps it,
 * so that alternated runs of two builds (swap `packages/reader/dist` or set `TJ_BENCH_LIVE`) read the same file, and
 * prints the median time from `subscribe({after: lastSeq - 100})` to the first record and of a cold `hub.session`.
 * `--written` has the session write a run first (its log then ends in pre-allocated space, as a live session's does).
 */
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { live } from '../lib/live.js';
import { coldOpenMs, firstRecordMs, writeSessionLog } from '../lib/replay.js';
import { gc, median } from '../lib/stats.js';

const args = new Map(
  process.argv.slice(2).map((arg) => {
    const [key, value] = arg.replace(/^--/, '').split('=');
    return [key, value ?? ''] as const;
  }),
);
const dir = resolve(args.get('dir') ?? 'bench/.work/replay-probe');
const records = Number(args.get('records') ?? 1_000_000);
const samples = Number(args.get('samples') ?? 41);
// A full collection before each sample (the default) or none (`--no-gc`, as `live-replay-peers` samples).
const collect = !args.has('no-gc');
const SESSION = 's1';

/** The log of the `live-replay-peers` figure: runs of 1,000 deltas of 100 characters. */
const shape = (count: number) => ({ deltaText: 'token '.repeat(16).slice(0, 100), deltasPerRun: 1000, records: count });

const bigRoot = join(dir, `big-${records}`);
const smallRoot = join(dir, 'small');
if (!existsSync(join(bigRoot, SESSION, 'events.jsonl'))) await writeSessionLog(bigRoot, SESSION, shape(records));
if (!existsSync(join(smallRoot, SESSION, 'events.jsonl'))) await writeSessionLog(smallRoot, SESSION, shape(1000));

const hub = live.openConversationHub({ root: bigRoot, retention: false, ringRecords: 512 });
const session = await hub.session(SESSION);
// `--written`: the session writes a run first, as a live one has, so its log ends in pre-allocated space (NULs).
if (args.has('written')) {
  const sent = await session.send({ requestId: `probe-${Date.now()}`, content: 'hi' });
  if (sent.created) await sent.run.done();
  await session.flush();
}
const after = session.durableSeq - 100;
const first: number[] = [];
const cpu: number[] = [];
for (let i = 0; i < samples + 1; i += 1) {
  if (collect) gc();
  const usage = process.cpuUsage();
  const ms = await firstRecordMs(session, after);
  const used = process.cpuUsage(usage);
  if (i > 0) {
    first.push(ms);
    cpu.push((used.user + used.system) / 1000);
  }
}
await hub.close();

// `--no-open` leaves out the cold opens, so that a profile (`--cpu-prof`) holds the replays alone.
const open = (root: string) => (args.has('no-open') ? Promise.resolve(0) : coldOpenMs(root, SESSION));
const big: number[] = [];
const small: number[] = [];
await open(bigRoot);
for (let i = 0; i < 7; i += 1) {
  big.push(await open(bigRoot));
  small.push(await open(smallRoot));
}
const size = statSync(join(bigRoot, SESSION, 'events.jsonl')).size;
console.log(
  `${records} records (${(size / 1e6).toFixed(0)} MB): first record ${median(first).toFixed(3)} ms (CPU ${median(cpu).toFixed(3)} ms); cold open ${median(big).toFixed(1)} ms vs ${median(small).toFixed(1)} ms on 1 k`,
);
