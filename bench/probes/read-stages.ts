/**
 * Where the time of `read-derive` and `startup-audit` goes (issue 14): `npx tsx --expose-gc bench/probes/read-stages.ts
 * [--quick] [--store] [--runs=7]`. Not a figure of `pnpm bench`: a probe that alternates, in one process and sample by
 * sample, the floor of a figure and the stages between it and the reader's full work, and prints each stage's median
 * wall and CPU time (user + system, every thread of the process) and its ratio to the floor. CPU time moves much less
 * than wall time when other processes share the cores, so it is the column to compare builds with.
 *
 * One journal (default): the `read-derive` floor; then the least any reader of this format does per line (split on LF,
 * a fatal UTF-8 decode, JSON.parse), plus the v1 schema verdict, plus the record and item objects `readJournal` yields;
 * then a minimal turn list on top (see minimalTurnList: a lower bound for any derivation); then `readJournal`,
 * `checkStore` without turns, and `checkStore`. No derivation at all in the first three.
 * `--store`: the `startup-audit` floor; discovery; the per-line work and a minimal turn list for every journal;
 * `readJournal` of every journal; `checkStore`; `auditStore`.
 * Set `TJ_BENCH_READER` to probe another build.
 */
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeStore } from '../generate/store.js';
import { writeTurnJournal } from '../generate/turn-journal.js';
import { rawSplitParse } from '../lib/floors.js';
import { READER_PATH, reader } from '../lib/reader.js';
import { gc, median } from '../lib/stats.js';

type Schema = typeof import('../../packages/schema/dist/index.js');
const schema: Schema = await import(new URL('../../packages/schema/dist/index.js', import.meta.url).href);

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const store = args.includes('--store');
const runs = Number(args.find((a) => a.startsWith('--runs='))?.slice('--runs='.length) ?? 7);
const fatal = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Calls `perLine(buffer, start, end)` for every complete line of the file, reading 128 KiB at a time. */
function eachLine(path: string, perLine: (buffer: Buffer, start: number, end: number) => void): void {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(128 * 1024);
    let filled = 0;
    for (;;) {
      const n = readSync(fd, buffer, filled, buffer.length - filled, null);
      if (n === 0) break;
      const end = filled + n;
      let from = 0;
      for (let lf = buffer.indexOf(10, from); lf >= 0 && lf < end; lf = buffer.indexOf(10, from)) {
        perLine(buffer, from, lf);
        from = lf + 1;
      }
      buffer.copy(buffer, 0, from, end);
      filled = end - from;
    }
  } finally {
    closeSync(fd);
  }
}

// What the pipeline stages keep: a batch's worth of items, dropped every 32 records as readJournal's batches are.
let kept: unknown[] = [];
function keep(item: unknown): void {
  kept.push(item);
  if (kept.length >= 32) kept = [];
}

/** The per-line work no reader can skip: a fatal decode, the parse, the schema verdict, the record and item objects. */
function readRecord(b: Buffer, s: number, e: number): Record<string, unknown> {
  const bytes = b.subarray(s, e);
  const value = JSON.parse(fatal.decode(bytes));
  const validation = schema.validateRecord(value);
  const record = { line: 0, offset: s, value, bytes, bytesOffset: s, validation, salvaged: false };
  keep({ kind: 'record', record });
  return value;
}

/**
 * The least a derivation can do on top of the per-line work (decode, parse, validate, a record object): one object per
 * turn, found by its id, that records the last record's event and counts the records. No framing rule, and no
 * ordering, duplicate, state-machine or summary rule: a lower bound for any check of the store, not a fold.
 */
function minimalTurnList(files: readonly string[]): number {
  let count = 0;
  for (const file of files) {
    const turns = new Map<string, { state: unknown; records: number }>();
    let lastId: string | undefined;
    let last: { state: unknown; records: number } | undefined;
    eachLine(file, (b, s, e) => {
      const value = readRecord(b, s, e);
      const id = value.turn_id;
      if (typeof id !== 'string') return;
      // A turn's records mostly follow one another: the last turn is checked before the map.
      let turn = id === lastId ? last : turns.get(id);
      if (turn === undefined) {
        turn = { state: value.event, records: 0 };
        turns.set(id, turn);
      }
      turn.state = value.event;
      turn.records += 1;
      lastId = id;
      last = turn;
    });
    count += turns.size;
  }
  return count;
}

function journalStages(file: string): Record<string, () => unknown> {
  return {
    floor: () => rawSplitParse(file),
    'decode + parse': () =>
      eachLine(file, (b, s, e) => {
        JSON.parse(fatal.decode(b.subarray(s, e)));
      }),
    '+ validate': () =>
      eachLine(file, (b, s, e) => {
        schema.validateRecord(JSON.parse(fatal.decode(b.subarray(s, e))));
      }),
    '+ record objects': () => eachLine(file, readRecord),
    '+ a minimal turn list': () => minimalTurnList([file]),
    readJournal: async () => {
      let items = 0;
      for await (const batch of reader.readJournal(file)) items += batch.length;
      return items;
    },
    'checkStore, no turns': () => reader.checkStore([file], { keepTurns: false }),
    checkStore: () => reader.checkStore([file]),
  };
}

function storeStages(root: string): Record<string, () => unknown> {
  const dir = join(root, '_turn_journal');
  const paths = readdirSync(dir).map((name) => join(dir, name));
  return {
    floor: () => {
      for (const name of readdirSync(dir)) {
        const text = readFileSync(join(dir, name), 'utf8');
        let from = 0;
        for (let lf = text.indexOf('\n'); lf >= 0; lf = text.indexOf('\n', from)) {
          JSON.parse(text.slice(from, lf));
          from = lf + 1;
        }
      }
    },
    discoverStore: () => reader.discoverStore([root]),
    'per-line work + a minimal turn list': () => minimalTurnList(paths),
    'readJournal of each': async () => {
      let items = 0;
      for (const path of paths) for await (const batch of reader.readJournal(path)) items += batch.length;
      return items;
    },
    checkStore: () => reader.checkStore([root]),
    auditStore: () => reader.auditStore([root]),
  };
}

// Beside the repository, as `pnpm bench` works, so the figures' files are on the same file system.
const workRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '.work');
mkdirSync(workRoot, { recursive: true });
const work = mkdtempSync(join(workRoot, 'read-stages-'));
try {
  let stages: Record<string, () => unknown>;
  let size: string;
  if (store) {
    const sessions = quick ? 1_000 : 10_000;
    const stats = writeStore(work, { sessions, seed: 4 });
    size = `${sessions} journals, ${(stats.bytes / 1e6).toFixed(0)} MB, ${stats.lines} lines`;
    stages = storeStages(work);
  } else {
    const file = join(work, '_turn_journal', 'conv-bench0001.jsonl');
    const stats = writeTurnJournal(file, { sessionId: 'conv-bench0001', seed: 1, targetBytes: quick ? 10e6 : 100e6 });
    size = `${(statSync(file).size / 1e6).toFixed(0)} MB, ${stats.lines} lines, ${stats.turns} turns`;
    stages = journalStages(file);
  }
  const names = Object.keys(stages);
  const wall = new Map<string, number[]>(names.map((name) => [name, []]));
  const cpu = new Map<string, number[]>(names.map((name) => [name, []]));
  for (const name of names) await stages[name]?.();
  for (let run = 0; run < runs; run += 1) {
    for (const name of names) {
      gc();
      const before = process.cpuUsage();
      const start = performance.now();
      await stages[name]?.();
      const ms = performance.now() - start;
      const used = process.cpuUsage(before);
      wall.get(name)?.push(ms);
      cpu.get(name)?.push((used.user + used.system) / 1000);
    }
  }
  const floorWall = median(wall.get('floor') ?? []);
  const floorCpu = median(cpu.get('floor') ?? []);
  console.log(`reader: ${READER_PATH}\n${size}; medians of ${runs} alternated runs\n`);
  console.log('| stage | wall ms | ÷ floor | CPU ms | ÷ floor |');
  console.log('| --- | ---: | ---: | ---: | ---: |');
  for (const name of names) {
    const w = median(wall.get(name) ?? []);
    const c = median(cpu.get(name) ?? []);
    console.log(
      `| ${name} | ${w.toFixed(0)} | ${(floorWall / w).toFixed(3)} | ${c.toFixed(0)} | ${(floorCpu / c).toFixed(3)} |`,
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
