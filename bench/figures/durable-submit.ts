import { closeSync, fdatasync, fdatasyncSync, fsyncSync, openSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { submittedRecord } from '../lib/floors.js';
import { ShuffledSamples } from '../lib/order.js';
import { loadSqlite, openSqlitePeer, runPythonPeer } from '../lib/peers.js';
import { judge, latencyInfoRow, median, quantile, round } from '../lib/stats.js';
import type { Figure, FigureRow } from '../lib/types.js';
import { writer } from '../lib/writer.js';
import { pendingRow } from './pending.js';

const SESSION = 'conv-bench0005';

/**
 * Durable `submit` latency of the writer (`openTurnJournal` in `every` mode, one `submit({ content, turnId })` at a
 * time, a new turn id each) against the floor: a raw `writeSync` of the same ~400-byte line on an `O_APPEND` file
 * followed by `fdatasyncSync`. Every record gives one sample of each series, in an order shuffled afresh per record
 * (`ShuffledSamples`), on files in the same directory, so drift in the disk and the place in the loop fall on every
 * series alike. The journal's clock is pinned so that its records are byte for byte the floor's.
 * A second, information-only series submits without a turn id (the writer generates one), which skips the check of
 * the session's other shards that a caller-supplied id triggers (when they are known unchanged, a synchronous `stat`
 * of the directory). A third series is the floor of any non-blocking
 * durable append in Node.js: the same raw `writeSync`, then `fdatasync` through libuv's thread pool (one trip there
 * and back), awaited; it shows how much of the gap is the asynchronous sync itself and how much is the library.
 *
 * Peers (issue 14, `bench/lib/peers.ts`): SQLite WAL `synchronous=FULL`, one INSERT of the same line per transaction,
 * sampled in the same loop (its commit blocks like the floor's); and the hermes-style Python writer (flock + write
 * + fsync per record) run in a child after the loop, with its own raw floor alternated inside that child.
 */
export const durableSubmit: Figure = {
  id: 'durable-submit',
  title: 'durable submit latency vs raw writeSync + fdatasyncSync',
  async run(context): Promise<FigureRow[]> {
    const samples = context.mode === 'quick' ? 200 : 2000;
    const warmup = 20;
    const total = samples + warmup;
    const floorFile = join(context.workDir, 'durable-floor.jsonl');
    const records = Array.from({ length: total }, (_, i) => submittedRecord(i));
    const lines = records.map((r) => Buffer.from(`${JSON.stringify(r)}\n`));
    let clockIndex = 0;
    const clock = () => Math.round(((records[clockIndex]?.created_at as number) ?? 0) * 1000);
    const open = (dir: string, fs?: typeof writer.nodeFileSystem) =>
      writer.openTurnJournal({
        dir: join(context.workDir, dir),
        sessionId: SESSION,
        durability: 'every',
        clock,
        ...(fs === undefined ? {} : { fs }),
      });
    const journal = await open('_turn_journal');
    const generated = await open('_turn_journal_generated');
    // The opt-in blocking-sync file system (issue 14), absent from builds before it existed.
    const blockingFs = (writer as { blockingSyncFileSystem?: typeof writer.nodeFileSystem }).blockingSyncFileSystem;
    const blocking = blockingFs === undefined ? null : await open('_turn_journal_blocking', blockingFs);
    const blockingMs: number[] = [];
    const sqlitePeer = loadSqlite();
    const sqlite = sqlitePeer.ok ? openSqlitePeer(sqlitePeer.value, join(context.workDir, 'peer.sqlite')) : null;
    const sqliteMs: number[] = [];
    const fd = openSync(floorFile, 'a');
    const asyncFd = openSync(join(context.workDir, 'durable-async-floor.jsonl'), 'a');
    const asyncSync = (syncFd = asyncFd) =>
      new Promise<void>((resolve, reject) => fdatasync(syncFd, (error) => (error ? reject(error) : resolve())));
    // The floor of pre-allocated space (spec §11.6, what the writer does since issue 14): the same line written over
    // zeros that were written and synced before the loop, so the fdatasync commits no change of file size, through
    // the thread pool.
    const preFd = openSync(join(context.workDir, 'durable-prealloc-floor.jsonl'), 'w+');
    const preBytes = lines.reduce((sum, line) => sum + line.length, 0);
    writeSync(preFd, Buffer.alloc(preBytes), 0, preBytes, 0);
    fsyncSync(preFd);
    let prePosition = 0;
    const preFloor: number[] = [];
    const asyncFloor: number[] = [];
    const floor: number[] = [];
    const subject: number[] = [];
    const noId: number[] = [];
    // One sample of each series per record, in a fresh random order each time (`ShuffledSamples`): the order of a
    // fixed loop showed up in the medians, whichever series followed the pre-allocated floor (bench/lib/order.ts).
    const shuffled = new ShuffledSamples(sqlite === null ? 6 : 7);
    try {
      for (let i = 0; i < total; i += 1) {
        const record = records[i] as Record<string, unknown>;
        const line = lines[i] as Buffer;
        const input = {
          content: record.content as string,
          streamId: record.stream_id as string,
          workspace: record.workspace as string,
          model: record.model as string,
          modelProvider: record.model_provider as string,
        };
        const text = line.toString('utf8', 0, line.length - 1);
        clockIndex = i;
        const series: (() => unknown)[] = [
          () => {
            writeSync(fd, line);
            fdatasyncSync(fd);
          },
          () => {
            writeSync(asyncFd, line);
            return asyncSync();
          },
          () => {
            writeSync(preFd, line, 0, line.length, prePosition);
            prePosition += line.length;
            return asyncSync(preFd);
          },
          () => journal.submit({ ...input, turnId: record.turn_id as string }),
          () => generated.submit(input),
          // Without the opt-in file system (builds before it), a placeholder that does nothing; its samples are
          // never kept.
          blocking === null ? () => undefined : () => blocking.submit({ ...input, turnId: record.turn_id as string }),
        ];
        if (sqlite !== null)
          series.push(() => {
            sqlite.insert.run(SESSION, text);
          });
        const [f, a, p, s, g, b, q] = (await shuffled.sample(series)) as number[];
        if (i >= warmup) {
          if (sqlite !== null) sqliteMs.push(q as number);
          floor.push(f as number);
          asyncFloor.push(a as number);
          preFloor.push(p as number);
          subject.push(s as number);
          noId.push(g as number);
          if (blocking !== null) blockingMs.push(b as number);
        }
      }
    } finally {
      closeSync(fd);
      closeSync(asyncFd);
      closeSync(preFd);
      await journal.close();
      await generated.close();
      await blocking?.close();
      sqlite?.db.close();
    }
    const lineFile = join(context.workDir, 'peer-lines.jsonl');
    writeFileSync(lineFile, Buffer.concat(lines));
    const python = runPythonPeer(['latency', context.workDir, lineFile, String(samples), String(warmup)]);
    const floorBytes = statSync(floorFile).size;
    const subjectBytes = statSync(journal.path).size;
    if (floorBytes !== subjectBytes)
      throw new Error(`submit wrote ${subjectBytes} bytes, the floor ${floorBytes}: the records differ`);
    const f50 = median(floor);
    const f99 = quantile(floor, 0.99);
    const s50 = median(subject);
    const s99 = quantile(subject, 0.99);
    const g50 = median(noId);
    const g99 = quantile(noId, 0.99);
    const a50 = median(asyncFloor);
    const recordBytes = lines[0]?.length ?? 0;
    context.log(
      `  raw append + fdatasync of ${recordBytes} B: median ${f50.toFixed(3)} ms, p99 ${f99.toFixed(3)} ms; ` +
        `submit: median ${s50.toFixed(3)} ms, p99 ${s99.toFixed(3)} ms; without turnId: median ${g50.toFixed(3)} ms; ` +
        `raw append + fdatasync through the thread pool: median ${a50.toFixed(3)} ms`,
    );
    const details = {
      samples,
      recordBytes,
      warmup,
      bytesWritten: subjectBytes,
      submitMedianMs: round(s50),
      submitP99Ms: round(s99),
      submitMeanMs: round(subject.reduce((a, b) => a + b, 0) / samples),
      floorMeanMs: round(floor.reduce((a, b) => a + b, 0) / samples),
      generatedIdMedianMs: round(g50),
      generatedIdP99Ms: round(g99),
      asyncFloorMedianMs: round(a50),
      asyncFloorP99Ms: round(quantile(asyncFloor, 0.99)),
    };
    const how = `openTurnJournal every mode, submit({ content, turnId }) awaited one at a time, one sample per record of it and of each other series in a shuffled order, the floor being writeSync + fdatasyncSync (O_APPEND); ${samples} samples each after ${warmup} warm-up`;
    const peerRows: FigureRow[] = [];
    const q50 = sqlitePeer.ok ? median(sqliteMs) : null;
    if (sqlitePeer.ok) {
      const q50 = median(sqliteMs);
      const q99 = quantile(sqliteMs, 0.99);
      context.log(
        `  ${sqlitePeer.version} WAL synchronous=FULL, one INSERT per transaction: median ${q50.toFixed(3)} ms, p99 ${q99.toFixed(3)} ms`,
      );
      const peerDetails = {
        samples,
        peer: `better-sqlite3, ${sqlitePeer.version}`,
        sqliteMedianMs: round(q50),
        sqliteP99Ms: round(q99),
        floorMedianMs: round(f50),
      };
      peerRows.push(
        {
          id: 'durable-submit-vs-sqlite-median',
          name: 'durable submit latency vs SQLite WAL FULL, median',
          value: round(s50),
          unit: 'ms',
          floor: round(q50),
          ratioDefinition: 'value / SQLite peer (latency); lower is better',
          direction: 'lower',
          target: 'ratio <= 1.0',
          ...judge(s50 / q50, 'lower', 1.0),
          status: 'measured',
          note: `peer: ${sqlitePeer.version} (better-sqlite3), journal_mode=WAL, synchronous=FULL, one INSERT of the same line per transaction, sampled in the same shuffled loop; SQLite = ${round(q50 / f50, 2)} × the raw append floor`,
          details: peerDetails,
        },
        {
          id: 'durable-submit-vs-sqlite-p99',
          name: 'durable submit latency vs SQLite WAL FULL, p99',
          value: round(s99),
          unit: 'ms',
          floor: round(q99),
          ratioDefinition: 'value / SQLite peer (latency); lower is better',
          direction: 'lower',
          target: 'ratio <= 1.0',
          ...judge(s99 / q99, 'lower', 1.0),
          status: 'measured',
          note: `p99 of the same ${samples} samples`,
          details: peerDetails,
        },
      );
    } else {
      context.log(`  SQLite: ${sqlitePeer.reason}`);
      for (const [id, name] of [
        ['durable-submit-vs-sqlite-median', 'durable submit latency vs SQLite WAL FULL, median'],
        ['durable-submit-vs-sqlite-p99', 'durable submit latency vs SQLite WAL FULL, p99'],
      ] as const)
        peerRows.push(
          pendingRow({
            id,
            name,
            unit: 'ms',
            floor: null,
            direction: 'lower',
            target: 'ratio <= 1.0',
            reason: sqlitePeer.reason,
          }),
        );
    }
    if (blocking !== null && q50 !== null) {
      const b50 = median(blockingMs);
      const b99 = quantile(blockingMs, 0.99);
      const q99 = quantile(sqliteMs, 0.99);
      context.log(
        `  submit with blockingSyncFileSystem (opt-in): median ${b50.toFixed(3)} ms, p99 ${b99.toFixed(3)} ms`,
      );
      peerRows.push({
        id: 'durable-submit-blocking-vs-sqlite-median',
        name: 'durable submit with the opt-in blockingSyncFileSystem vs SQLite WAL FULL, median',
        value: round(b50),
        unit: 'ms',
        floor: round(q50),
        ratioDefinition: 'value / SQLite peer (latency); lower is better',
        direction: 'lower',
        target: 'ratio <= 1.0',
        ...judge(b50 / q50, 'lower', 1.0),
        status: 'measured',
        note: `submit({ content, turnId }) through blockingSyncFileSystem (fdatasync on the calling thread, as better-sqlite3 commits; it blocks the event loop, so it is not the default), sampled in the same shuffled loop; p99 ${round(b99, 3)} ms vs SQLite p99 ${round(q99, 3)} ms (${round(b99 / q99, 2)} ×); = ${round(b50 / f50, 2)} × the blocking raw floor`,
        details: { samples, blockingMedianMs: round(b50), blockingP99Ms: round(b99), sqliteP99Ms: round(q99) },
      });
    }
    const pre50 = median(preFloor);
    context.log(
      `  raw overwrite of pre-allocated space + fdatasync through the thread pool: median ${pre50.toFixed(3)} ms`,
    );
    peerRows.push({
      id: 'durable-submit-preallocated-floor',
      name: 'raw overwrite of pre-allocated space + fdatasync through the thread pool, median',
      value: round(pre50),
      unit: 'ms',
      floor: round(f50),
      ratioDefinition: 'value / floor (latency); lower is better',
      direction: 'lower',
      target: 'none (reported)',
      ratio: round(pre50 / f50, 3),
      met: null,
      status: 'info',
      note:
        `writeSync over zeros synced before the loop, then fdatasync through libuv's thread pool, awaited: no file-size change to commit, as in SQLite's WAL; the floor of the writer's pre-allocated space (spec §11.6), which submit now overwrites` +
        (q50 === null
          ? ''
          : `; = ${round(pre50 / q50, 2)} × SQLite, against ${round(a50 / q50, 2)} × SQLite for the appending non-blocking floor`),
      details: { samples, preallocatedMedianMs: round(pre50), preallocatedP99Ms: round(quantile(preFloor, 0.99)) },
    });
    if (python.ok && python.value.peerMs !== undefined && python.value.floorMs !== undefined) {
      const p50 = median(python.value.peerMs);
      const pf50 = median(python.value.floorMs);
      context.log(
        `  hermes-style ${python.version} (flock + write + fsync): median ${p50.toFixed(3)} ms; its raw floor ${pf50.toFixed(3)} ms`,
      );
      peerRows.push({
        id: 'durable-submit-python-peer',
        name: 'hermes-style Python append (flock + write + fsync), median',
        value: round(p50),
        unit: 'ms',
        floor: round(f50),
        ratioDefinition: 'value / floor (latency); lower is better',
        direction: 'lower',
        target: 'none (reported)',
        ratio: round(p50 / f50, 3),
        met: null,
        status: 'info',
        note: `${python.version} in a child after the loop (not alternated with the floor); its own raw write + fdatasync floor alternated in that child: ${round(pf50, 3)} ms; submit = ${round(s50 / p50, 2)} × this peer`,
        details: {
          samples,
          pythonMedianMs: round(p50),
          pythonP99Ms: round(quantile(python.value.peerMs, 0.99)),
          pythonFloorMedianMs: round(pf50),
        },
      });
    } else {
      const reason = python.ok ? 'peer unavailable: no samples' : python.reason;
      context.log(`  Python: ${reason}`);
      peerRows.push(
        pendingRow({
          id: 'durable-submit-python-peer',
          name: 'hermes-style Python append (flock + write + fsync), median',
          unit: 'ms',
          floor: round(f50),
          direction: 'lower',
          target: 'none (reported)',
          reason,
        }),
      );
    }
    return [
      {
        id: 'durable-submit-median',
        name: `durable submit latency, median (${recordBytes}-byte submitted)`,
        value: round(s50),
        unit: 'ms',
        floor: round(f50),
        ratioDefinition: 'value / floor (latency); lower is better',
        direction: 'lower',
        target: 'ratio <= 1.15',
        ...judge(s50 / f50, 'lower', 1.15),
        status: 'measured',
        note: how,
        details,
      },
      {
        id: 'durable-submit-p99',
        name: 'durable submit latency, p99',
        value: round(s99),
        unit: 'ms',
        floor: round(f99),
        ratioDefinition: 'value / floor (latency); lower is better',
        direction: 'lower',
        target: 'none (reported)',
        ratio: round(s99 / f99, 3),
        met: null,
        status: 'info',
        note: `p99 of the same ${samples} samples`,
        details,
      },
      {
        id: 'durable-submit-generated-id',
        name: 'durable submit latency, median, without turnId (id generated)',
        value: round(g50),
        unit: 'ms',
        floor: round(f50),
        ratioDefinition: 'value / floor (latency); lower is better',
        direction: 'lower',
        target: 'none (reported)',
        ratio: round(g50 / f50, 3),
        met: null,
        status: 'info',
        note: `submit({ content }) on a second journal in the same loop: no check of the session's other shards (p99 ${round(g99, 3)} ms)`,
        details: { samples },
      },
      latencyInfoRow({
        id: 'durable-submit-async-floor',
        name: 'raw append + fdatasync through the thread pool (non-blocking floor), median',
        value: a50,
        floor: f50,
        note: `writeSync, then fdatasync through libuv's thread pool, awaited: what no non-blocking durable append can beat; submit = ${round(s50 / a50, 2)} × this`,
        details: { samples },
      }),
      ...peerRows,
    ];
  },
};
