import { mkdirSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { submittedRecord } from '../lib/floors.js';
import { nowMs, round, throughputRow } from '../lib/stats.js';
import type { Figure, FigureRow } from '../lib/types.js';
import { writer } from '../lib/writer.js';

const SESSIONS = 64;

/**
 * Durable appends across 64 sessions at once. Subject: 64 `AppendFile`s in `every` mode, one file per session, each
 * with one `appendRecord` in flight at a time, all 64 concurrently. Floor: 64 concurrent loops, one per file, each
 * appending the same record with `FileHandle.write` and waiting for `FileHandle.datasync` before the next (libuv's
 * default pool of 4 threads runs the system calls for both). Subject and floor run alternately, floor first. Also
 * reported: the same with 64 turn journals (`openTurnJournal`, `submit` with a turn id) in one directory.
 */
export const sessions64: Figure = {
  id: 'sessions-64',
  title: 'durable appends across 64 sessions vs raw concurrent append + fdatasync',
  async run(context): Promise<FigureRow[]> {
    const perSession = context.mode === 'quick' ? 8 : 40;
    const rounds = context.mode === 'quick' ? 1 : 3;
    const record = (s: number, i: number) => submittedRecord(s * 100000 + i);
    const line = (s: number, i: number) => Buffer.from(`${JSON.stringify(record(s, i))}\n`);
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
    await floorRun('warmup', 2);
    await writerRun('warmup', 2);
    await journalRun('warmup', 2);
    const floorMs: number[] = [];
    const writerMs: number[] = [];
    const journalMs: number[] = [];
    for (let r = 0; r < rounds; r += 1) {
      floorMs.push(await floorRun(r, perSession));
      writerMs.push(await writerRun(r, perSession));
      journalMs.push(await journalRun(r, perSession));
    }
    const n = SESSIONS * perSession;
    const rate = (ms: number[]) => n / (ms.reduce((a, b) => a + b, 0) / ms.length / 1000);
    const floor = rate(floorMs);
    const value = rate(writerMs);
    const journals = rate(journalMs);
    context.log(
      `  raw 64-file concurrent append + fdatasync: ${floor.toFixed(0)} records/s; AppendFile every: ${value.toFixed(0)} records/s; ` +
        `turn journals: ${journals.toFixed(0)} records/s`,
    );
    const pool = process.env.UV_THREADPOOL_SIZE ?? '4 (default)';
    return [
      throughputRow({
        id: 'sessions-64',
        name: 'durable appends across 64 sessions at once',
        unit: 'records/s',
        value,
        floor,
        minRatio: 0.8,
        note: `64 AppendFile (every) x ${perSession} awaited appendRecord vs 64 files x ${perSession} FileHandle write + datasync; mean of ${rounds} alternated rounds after an untimed warm-up pass; UV_THREADPOOL_SIZE=${pool}`,
        details: {
          sessions: SESSIONS,
          perSession,
          rounds,
          floorMs: floorMs.map((x) => round(x)),
          writerMs: writerMs.map((x) => round(x)),
        },
      }),
      throughputRow({
        id: 'sessions-64-turn-journals',
        name: 'durable submits across 64 turn journals at once',
        unit: 'records/s',
        value: journals,
        floor,
        note: '64 openTurnJournal (every) in one directory, submit({ content, turnId }) one at a time per session',
        details: { sessions: SESSIONS, perSession, rounds, journalMs: journalMs.map((x) => round(x)) },
      }),
    ];
  },
};
