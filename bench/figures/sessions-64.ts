import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { submittedRecord } from '../lib/floors.js';
import { loadSqlite, openSqlitePeer, runPythonPeer } from '../lib/peers.js';
import { nowMs, round, throughputRow } from '../lib/stats.js';
import type { Figure, FigureRow } from '../lib/types.js';
import { writer } from '../lib/writer.js';
import { pendingRow } from './pending.js';

const SESSIONS = 64;

/**
 * Durable appends across 64 sessions at once. Subject: 64 `AppendFile`s in `every` mode, one file per session, each
 * with one `appendRecord` in flight at a time, all 64 concurrently, in this process with Node's default settings.
 * Floor (issue 14): the same 64 concurrent loops of `FileHandle.write` + `FileHandle.datasync` on 64 files, in a child
 * process started with `UV_THREADPOOL_SIZE=64`, so that the floor's 64 syncs run in parallel rather than 4 at a time
 * (`bench/child/floor-64-files.mjs`). The same loops in this process (4 pool threads) are reported as information.
 * Peers: SQLite WAL `synchronous=FULL`, the 64 sessions' records in one database, one INSERT per transaction (the
 * synchronous API commits one at a time); the hermes-style Python writer with 64 threads. Subject, floors and the
 * SQLite peer run alternately, round by round. Also reported: the same with 64 turn journals (`openTurnJournal`,
 * `submit` with a turn id) in one directory.
 */
export const sessions64: Figure = {
  id: 'sessions-64',
  title: 'durable appends across 64 sessions vs raw concurrent append + fdatasync',
  async run(context): Promise<FigureRow[]> {
    const perSession = context.mode === 'quick' ? 8 : 40;
    const rounds = context.mode === 'quick' ? 1 : 3;
    const record = (s: number, i: number) => submittedRecord(s * 100000 + i);
    const line = (s: number, i: number) => Buffer.from(`${JSON.stringify(record(s, i))}\n`);
    const linesFile = (count: number) => {
      const file = join(context.workDir, `lines-${count}.jsonl`);
      const all: string[] = [];
      for (let s = 0; s < SESSIONS; s += 1) for (let i = 0; i < count; i += 1) all.push(JSON.stringify(record(s, i)));
      writeFileSync(file, `${all.join('\n')}\n`);
      return file;
    };
    const files = { warmup: linesFile(2), timed: linesFile(perSession) };
    const parallelFloorRun = (r: number | string, count: number) => {
      const child = spawnSync(
        process.execPath,
        [
          join(context.root, 'bench', 'child', 'floor-64-files.mjs'),
          context.workDir,
          `p${r}`,
          count === perSession ? files.timed : files.warmup,
          String(SESSIONS),
          String(count),
        ],
        { encoding: 'utf8', env: { ...process.env, UV_THREADPOOL_SIZE: String(SESSIONS) } },
      );
      if (child.status !== 0) throw new Error(`the parallel-sync floor failed: ${child.stderr}`);
      return (JSON.parse(child.stdout) as { ms: number }).ms;
    };
    const sqlitePeer = loadSqlite();
    const sqliteRun = (r: number | string, count: number) => {
      if (!sqlitePeer.ok) return 0;
      const { db, insert } = openSqlitePeer(sqlitePeer.value, join(context.workDir, `peer-${r}.sqlite`));
      const texts = Array.from({ length: SESSIONS }, (_, s) =>
        Array.from({ length: count }, (_, i) => JSON.stringify(record(s, i))),
      );
      try {
        const start = nowMs();
        // The 64 sessions take turns, as their requests would reach one connection.
        for (let i = 0; i < count; i += 1)
          for (let s = 0; s < SESSIONS; s += 1) insert.run(`conv-bench${s}`, (texts[s] as string[])[i]);
        return nowMs() - start;
      } finally {
        db.close();
      }
    };
    const floorRun = async (r: number | string, perSession: number) => {
      const handles = await Promise.all(
        Array.from({ length: SESSIONS }, (_, s) => open(join(context.workDir, `floor-${r}-${s}.jsonl`), 'a')),
      );
      try {
        const start = nowMs();
        await Promise.all(
          handles.map(async (handle, s) => {
            for (let i = 0; i < perSession; i += 1) {
              await handle.write(line(s, i));
              await handle.datasync();
            }
          }),
        );
        return nowMs() - start;
      } finally {
        await Promise.all(handles.map((h) => h.close()));
      }
    };
    const writerRun = async (r: number | string, perSession: number) => {
      const files = await Promise.all(
        Array.from({ length: SESSIONS }, (_, s) =>
          writer.AppendFile.open(join(context.workDir, `writer-${r}-${s}.jsonl`), { durability: 'every' }),
        ),
      );
      try {
        const start = nowMs();
        await Promise.all(
          files.map(async (file, s) => {
            for (let i = 0; i < perSession; i += 1) await file.appendRecord(record(s, i));
          }),
        );
        return nowMs() - start;
      } finally {
        await Promise.all(files.map((f) => f.close()));
      }
    };
    const journalRun = async (r: number | string, perSession: number) => {
      const dir = join(context.workDir, `journals-${r}`, '_turn_journal');
      mkdirSync(dir, { recursive: true });
      const journals = await Promise.all(
        Array.from({ length: SESSIONS }, (_, s) =>
          writer.openTurnJournal({ dir, sessionId: `conv-bench${String(s).padStart(4, '0')}`, durability: 'every' }),
        ),
      );
      try {
        const start = nowMs();
        await Promise.all(
          journals.map(async (journal, s) => {
            for (let i = 0; i < perSession; i += 1) {
              const r = record(s, i);
              await journal.submit({
                content: r.content as string,
                turnId: r.turn_id as string,
                streamId: r.stream_id as string,
                workspace: r.workspace as string,
                model: r.model as string,
                modelProvider: r.model_provider as string,
              });
            }
          }),
        );
        return nowMs() - start;
      } finally {
        await Promise.all(journals.map((j) => j.close()));
      }
    };
    // One untimed pass of 2 records per session first, so that the JIT warms up the subjects' code, not the first round.
    parallelFloorRun('warmup', 2);
    await floorRun('warmup', 2);
    await writerRun('warmup', 2);
    await journalRun('warmup', 2);
    sqliteRun('warmup', 2);
    const parallelMs: number[] = [];
    const floorMs: number[] = [];
    const writerMs: number[] = [];
    const journalMs: number[] = [];
    const sqliteMs: number[] = [];
    for (let r = 0; r < rounds; r += 1) {
      parallelMs.push(parallelFloorRun(r, perSession));
      writerMs.push(await writerRun(r, perSession));
      floorMs.push(await floorRun(r, perSession));
      journalMs.push(await journalRun(r, perSession));
      if (sqlitePeer.ok) sqliteMs.push(sqliteRun(r, perSession));
    }
    const python = runPythonPeer([
      'sessions',
      context.workDir,
      files.timed,
      String(SESSIONS),
      String(perSession),
      String(rounds),
    ]);
    const n = SESSIONS * perSession;
    const rate = (ms: number[]) => n / (ms.reduce((a, b) => a + b, 0) / ms.length / 1000);
    const floor = rate(parallelMs);
    const pool4 = rate(floorMs);
    const value = rate(writerMs);
    const journals = rate(journalMs);
    context.log(
      `  raw 64-file append + fdatasync, 64 parallel syncs: ${floor.toFixed(0)} records/s; same on 4 pool threads: ${pool4.toFixed(0)} records/s; ` +
        `AppendFile every: ${value.toFixed(0)} records/s; turn journals: ${journals.toFixed(0)} records/s`,
    );
    const pool = process.env.UV_THREADPOOL_SIZE ?? '4 (default)';
    const rows: FigureRow[] = [
      throughputRow({
        id: 'sessions-64',
        name: 'durable appends across 64 sessions at once',
        unit: 'records/s',
        value,
        floor,
        minRatio: 0.9,
        note: `64 AppendFile (every) x ${perSession} awaited appendRecord (this process, UV_THREADPOOL_SIZE=${pool}) vs 64 files x ${perSession} FileHandle write + datasync in a child with UV_THREADPOOL_SIZE=64 (64 syncs in parallel); mean of ${rounds} alternated rounds after an untimed warm-up pass`,
        details: {
          sessions: SESSIONS,
          perSession,
          rounds,
          parallelFloorMs: parallelMs.map((x) => round(x)),
          pool4FloorMs: floorMs.map((x) => round(x)),
          writerMs: writerMs.map((x) => round(x)),
        },
      }),
      throughputRow({
        id: 'sessions-64-pool4-floor',
        name: 'durable appends across 64 sessions vs the same loops on 4 pool threads',
        unit: 'records/s',
        value,
        floor: pool4,
        note: `the floor's loops in this process, UV_THREADPOOL_SIZE=${pool}: at most 4 syncs at once (the floor of issue 6)`,
        details: { pool4FloorMs: floorMs.map((x) => round(x)) },
      }),
      throughputRow({
        id: 'sessions-64-turn-journals',
        name: 'durable submits across 64 turn journals at once',
        unit: 'records/s',
        value: journals,
        floor,
        note: '64 openTurnJournal (every) in one directory, submit({ content, turnId }) one at a time per session; floor: the parallel-sync floor',
        details: { sessions: SESSIONS, perSession, rounds, journalMs: journalMs.map((x) => round(x)) },
      }),
    ];
    if (sqlitePeer.ok) {
      const sqlite = rate(sqliteMs);
      context.log(`  ${sqlitePeer.version} WAL FULL, 64 sessions in one database: ${sqlite.toFixed(0)} records/s`);
      rows.push({
        ...throughputRow({
          id: 'sessions-64-vs-sqlite',
          name: 'durable appends across 64 sessions vs SQLite WAL FULL',
          unit: 'records/s',
          value,
          floor: sqlite,
          minRatio: 2,
          note: `peer: ${sqlitePeer.version} (better-sqlite3), journal_mode=WAL, synchronous=FULL, the 64 sessions' records in one database, one INSERT per transaction, sessions taking turns; alternated round by round`,
          details: { sqliteMs: sqliteMs.map((x) => round(x)), peer: `better-sqlite3, ${sqlitePeer.version}` },
        }),
        ratioDefinition: 'value / SQLite peer (throughput); higher is better',
      });
    } else {
      context.log(`  SQLite: ${sqlitePeer.reason}`);
      rows.push(
        pendingRow({
          id: 'sessions-64-vs-sqlite',
          name: 'durable appends across 64 sessions vs SQLite WAL FULL',
          unit: 'records/s',
          floor: null,
          direction: 'higher',
          target: 'ratio >= 2',
          reason: sqlitePeer.reason,
        }),
      );
    }
    if (python.ok && python.value.roundsMs !== undefined) {
      const py = rate(python.value.roundsMs);
      context.log(`  hermes-style ${python.version}, 64 threads: ${py.toFixed(0)} records/s`);
      rows.push(
        throughputRow({
          id: 'sessions-64-python-peer',
          name: 'hermes-style Python, 64 threads (flock + write + fsync)',
          unit: 'records/s',
          value: py,
          floor,
          note: `${python.version}, one thread and file per session, run after the alternated rounds; AppendFile = ${round(value / py, 2)} × this peer`,
          details: { roundsMs: python.value.roundsMs.map((x) => round(x)) },
        }),
      );
    } else {
      const reason = python.ok ? 'peer unavailable: no samples' : python.reason;
      context.log(`  Python: ${reason}`);
      rows.push(
        pendingRow({
          id: 'sessions-64-python-peer',
          name: 'hermes-style Python, 64 threads (flock + write + fsync)',
          unit: 'records/s',
          floor: round(floor),
          direction: 'higher',
          target: 'none (reported)',
          reason,
        }),
      );
    }
    return rows;
  },
};
