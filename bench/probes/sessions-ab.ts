/**
 * Two writer builds on the `sessions-64` loop (64 `AppendFile`s in `every` mode, `perSession` awaited appends each, all
 * 64 at once), alternated pair by pair in one process so that both meet the same disk:
 * `npx tsx bench/probes/sessions-ab.ts <old writer index.js> <new writer index.js> [pairs=8] [perSession=40]`.
 * Prints each pair's records/s and the new build's time ÷ the old one's (median of the pairs, and of the totals).
 * What found the lock check of d0db01d (bench/results/history.md, "sessions-64 and the lock check").
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { submittedRecord } from '../lib/floors.js';

const SESSIONS = 64;

interface Appender {
  appendRecord(record: Record<string, unknown>): Promise<unknown>;
  close(): Promise<void>;
}
interface WriterBuild {
  AppendFile: { open(path: string, options: { durability: 'every' }): Promise<Appender> };
}

/** A writer build's main entry merged with its `file-system` entry, as `bench/lib/writer.ts` loads one. */
async function load(index: string): Promise<WriterBuild> {
  const path = resolve(index);
  const fileSystemEntry = join(dirname(path), 'file-system-entry.js');
  return {
    ...(await import(pathToFileURL(path).href)),
    ...(existsSync(fileSystemEntry) ? await import(pathToFileURL(fileSystemEntry).href) : {}),
  } as WriterBuild;
}

const [oldPath, newPath, pairsArg = '8', perArg = '40'] = process.argv.slice(2);
if (oldPath === undefined || newPath === undefined) {
  console.error(
    'usage: npx tsx bench/probes/sessions-ab.ts <old writer index.js> <new writer index.js> [pairs] [perSession]',
  );
  process.exit(2);
}
const builds = { old: await load(oldPath), new: await load(newPath) };
const pairs = Number(pairsArg);
const perSession = Number(perArg);
const dir = mkdtempSync(join(tmpdir(), 'tj-sessions-ab-'));

/** Milliseconds for 64 files × `count` awaited appends with `build`. */
async function run(build: WriterBuild, tag: string, count: number): Promise<number> {
  const files = await Promise.all(
    Array.from({ length: SESSIONS }, (_, s) =>
      build.AppendFile.open(join(dir, `${tag}-${s}.jsonl`), { durability: 'every' }),
    ),
  );
  const start = performance.now();
  await Promise.all(
    files.map(async (file, s) => {
      for (let i = 0; i < count; i += 1) await file.appendRecord(submittedRecord(s * 100_000 + i));
    }),
  );
  const ms = performance.now() - start;
  await Promise.all(files.map((file) => file.close()));
  return ms;
}

const rate = (ms: number) => Math.round((SESSIONS * perSession) / (ms / 1000));
try {
  await run(builds.old, 'warm-old', 4);
  await run(builds.new, 'warm-new', 4);
  const ratios: number[] = [];
  let oldTotal = 0;
  let newTotal = 0;
  for (let p = 0; p < pairs; p += 1) {
    // Which build goes first alternates, so that neither always meets the disk after the other.
    const first = p % 2 === 0 ? 'old' : 'new';
    const ms = { old: 0, new: 0 };
    for (const which of first === 'old' ? (['old', 'new'] as const) : (['new', 'old'] as const))
      ms[which] = await run(builds[which], `${which}-${p}`, perSession);
    oldTotal += ms.old;
    newTotal += ms.new;
    ratios.push(ms.new / ms.old);
    console.log(
      `pair ${p}: old ${rate(ms.old)} new ${rate(ms.new)} records/s, new ÷ old time ${(ms.new / ms.old).toFixed(3)}`,
    );
  }
  ratios.sort((a, b) => a - b);
  const median = ratios[Math.floor(ratios.length / 2)] as number;
  console.log(`new ÷ old time: median of pairs ${median.toFixed(3)}, of totals ${(newTotal / oldTotal).toFixed(3)}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
