import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { PostgresServer } from '@turnjournal/test-support/postgres-server';
import { SEEK_SEQ_SQL } from '../../packages/postgres/dist/line-rows.js';
import { live } from '../lib/live.js';
import { ShuffledSamples } from '../lib/order.js';
import { type Pg, type Postgres, withPostgresServer } from '../lib/postgres-figure.js';
import { judge, median, nowMs, quantile, round } from '../lib/stats.js';
import type { BenchContext, Figure, FigureRow } from '../lib/types.js';
import { WRITER_PATH, writer } from '../lib/writer.js';
import { pendingRow } from './pending.js';

type PostgresStore = ReturnType<Postgres['openPostgresRecordStore']>;
type Hub = ReturnType<typeof live.openConversationHub>;
type Session = Awaited<ReturnType<Hub['session']>>;
type FileStoreEntry = typeof import('../../packages/writer/dist/file-store-entry.js');
type Run = { toolResult(input: { toolCallId: string; output: string }): Promise<void> };

/** What every part of the figure is given: the server, the store package and node-postgres as the store loads it. */
interface Database {
  readonly server: PostgresServer;
  readonly postgres: Postgres;
  readonly pg: Pg;
  /**
   * A store instance of its own, named `name`, on the shared server (as one host would open it), set up: its tables
   * exist and its clock has been read.
   */
  open(name: string, options?: { readonly pool?: InstanceType<Pg['Pool']> }): Promise<PostgresStore>;
}

/**
 * The live hub and the event log on PostgreSQL (issue 36), on a throwaway server the figure starts (Debian's binaries,
 * `fsync` and `synchronous_commit` on, as `postgres-append` does), in four parts: the hub's committed message on the
 * file store and on PostgreSQL side by side; 64 sessions at once against 64 raw autocommit inserters of the same
 * lines; reconnect replay after a seq on a 1 M-record session against a 1 k-record one; and cross-host fan-out, from
 * an owner hub's commit to a follower hub's subscriber on a second store instance. A server that cannot start makes
 * every row say why (skipped).
 */
export const postgresLive: Figure = {
  id: 'postgres-live',
  title: 'live hub on PostgreSQL: committed message vs files, 64 sessions, replay of 1 M records, cross-host fan-out',
  run(context): Promise<FigureRow[]> {
    return withPostgresServer(
      context,
      (reason) => SKIPPABLE_ROWS.map((row) => pendingRow({ ...row, floor: null, reason })),
      async ({ server, postgres, pg }) => {
        const database: Database = {
          server,
          postgres,
          pg,
          async open(name, options = {}) {
            const store =
              options.pool === undefined
                ? postgres.openPostgresRecordStore({ connectionString: server.connectionString, store: name })
                : postgres.openPostgresRecordStore({ pool: options.pool, store: name });
            await store.setup();
            return store;
          },
        };
        return [
          ...(await committedMessages(context, database)),
          ...(await sessions64(context, database)),
          ...(await reconnectReplay(context, database)),
          ...(await crossHostFanOut(context, database)),
        ];
      },
    );
  },
};

const MESSAGE_MEDIAN_ROW = {
  id: 'postgres-live-message-median',
  name: 'live committed message through the hub on PostgreSQL vs on the file store, median',
  unit: 'ms',
  floorUnit: 'ms on the file store',
  ratioDefinition: 'value / floor (latency); floor = the same message through a hub on the file store',
  direction: 'lower',
  target: 'none (reported)',
} as const;
const MESSAGE_P99_ROW = {
  ...MESSAGE_MEDIAN_ROW,
  id: 'postgres-live-message-p99',
  name: 'live committed message through the hub on PostgreSQL vs on the file store, p99',
} as const;

const SESSIONS = 64;
const SESSIONS_ROW = {
  id: 'postgres-live-sessions-64',
  name: `PostgreSQL durable appends across ${SESSIONS} sessions (event logs, group), records/s`,
  unit: 'records/s',
  ratioDefinition: `value / floor (throughput); floor = ${SESSIONS} raw autocommit inserters of the same lines on ${SESSIONS} connections`,
  direction: 'higher',
  target: 'ratio >= 1',
} as const;

const SESSIONS_JOURNALS_ROW = {
  ...SESSIONS_ROW,
  id: 'postgres-live-sessions-64-journals',
  name: `PostgreSQL durable appends across ${SESSIONS} bare store journals (group, same lines), records/s`,
  target: 'none (reported)',
} as const;

const REPLAY_ROW = {
  id: 'postgres-live-reconnect',
  name: 'PostgreSQL reconnect replay: subscribe(after: head-100) to its 100th record, big session vs 1 k-record one (analysed)',
  unit: 'ms',
  floorUnit: 'ms on a 1,000-record session',
  ratioDefinition: 'value / floor (latency); floor = the same on a 1,000-record session',
  direction: 'lower',
  target: 'ratio <= 1.5',
} as const;

const FANOUT_P50_ROW = {
  id: 'postgres-live-cross-host-p50',
  name: 'PostgreSQL cross-host fan-out: committed on the owner hub → delivered by a follower hub on another store instance, p50',
  unit: 'ms',
  floorUnit: "ms to the owner hub's own subscriber",
  ratioDefinition:
    "value / floor (latency); floor = the same record, committed → delivered to a subscriber of the owner's hub",
  direction: 'lower',
  target: 'none (reported)',
} as const;
const FANOUT_P99_ROW = {
  ...FANOUT_P50_ROW,
  id: 'postgres-live-cross-host-p99',
  name: 'PostgreSQL cross-host fan-out: committed on the owner hub → delivered by a follower hub on another store instance, p99',
} as const;

const REPLAY_IMPORTED_ROW = {
  ...REPLAY_ROW,
  id: 'postgres-live-reconnect-imported',
  name: 'PostgreSQL reconnect replay: subscribe(after: head-100) to its 100th record, big session vs 1 k-record one (just imported)',
} as const;

/** The rows listed as skipped when the server cannot start. */
const SKIPPABLE_ROWS = [
  MESSAGE_MEDIAN_ROW,
  MESSAGE_P99_ROW,
  SESSIONS_ROW,
  SESSIONS_JOURNALS_ROW,
  REPLAY_ROW,
  FANOUT_P50_ROW,
  FANOUT_P99_ROW,
];

/**
 * What moving a session from files to the database costs a user: one committed message through the hub
 * (`run.toolResult`: `tool.result` and its `message_append`, durable before it resolves, as `live-stream-cost`
 * measures it) on a hub over the file store and on a hub over PostgreSQL (`group` commits, the database's clock),
 * one of each per sample in a shuffled order.
 */
async function committedMessages(context: BenchContext, database: Database): Promise<FigureRow[]> {
  const messages = context.mode === 'quick' ? 200 : 1000;
  const warmup = 20;
  const store = await database.open('message');
  const onFile = live.openConversationHub({ root: join(context.workDir, 'message'), retention: false });
  const onDatabase = live.openConversationHub({ store, clock: store.clock, retention: false });
  const fileSamples: number[] = [];
  const databaseSamples: number[] = [];
  try {
    const fileRun = await startRun(onFile);
    const databaseRun = await startRun(onDatabase);
    const shuffled = new ShuffledSamples(2);
    for (let i = 0; i < messages + warmup; i += 1) {
      const id = String(i).padStart(6, '0');
      const message = (run: Run) => () =>
        run.toolResult({ toolCallId: `c${id}`, output: `result ${id}: ${'y'.repeat(200)}` });
      const [onFileMs, onDatabaseMs] = (await shuffled.sample([message(fileRun), message(databaseRun)])) as [
        number,
        number,
      ];
      if (i >= warmup) {
        fileSamples.push(onFileMs);
        databaseSamples.push(onDatabaseMs);
      }
    }
  } finally {
    await onFile.close({ runs: 'cancel' });
    await onDatabase.close({ runs: 'cancel' });
    await store.close();
  }
  const d50 = median(databaseSamples);
  const f50 = median(fileSamples);
  const d99 = quantile(databaseSamples, 0.99);
  const f99 = quantile(fileSamples, 0.99);
  context.log(
    `  committed message: PostgreSQL median ${d50.toFixed(3)} ms, p99 ${d99.toFixed(3)} ms; ` +
      `file store median ${f50.toFixed(3)} ms, p99 ${f99.toFixed(3)} ms`,
  );
  const note = `${messages} run.toolResult() awaited one at a time on each hub (after ${warmup} warm-up), one of each per sample in a shuffled order; the PostgreSQL hub commits in group mode over a Unix socket to a server with fsync and synchronous_commit on`;
  const details = {
    messages,
    warmup,
    p50Ms: round(d50),
    fileP50Ms: round(f50),
    p99Ms: round(d99),
    fileP99Ms: round(f99),
  };
  return [
    {
      ...MESSAGE_MEDIAN_ROW,
      value: round(d50),
      floor: round(f50),
      ratio: round(d50 / f50, 3),
      met: null,
      status: 'info',
      note,
      details,
    },
    {
      ...MESSAGE_P99_ROW,
      value: round(d99),
      floor: round(f99),
      ratio: round(d99 / f99, 3),
      met: null,
      status: 'info',
      note,
      details,
    },
  ];
}

/** Session `s1` of `hub` with a run started (a user message), whose tool results are the committed messages. */
async function startRun(hub: Hub): Promise<Run> {
  const session = await hub.session('s1');
  if (session.role !== 'owner') throw new Error(`expected to own session s1 of ${hub.root}, got a ${session.role}`);
  const sent = await session.send({ requestId: 'r1', content: 'hi' });
  if (!sent.created) throw new Error('expected a new run');
  return sent.run;
}

/**
 * 64 sessions at once on PostgreSQL: 64 event logs (`openEventLog` on the store, `group`), each with one
 * `appendMessage` awaited at a time, all 64 concurrently, the store's pool 64 connections wide; against 64 raw
 * inserters on 64 connections, each inserting its session's lines one autocommit `INSERT` at a time. The floor inserts
 * the very bytes the subject committed (read back from the store's table), so both write the same lines. To tell the
 * event-log writer's share from the store's, the same lines are also appended by 64 bare store journals
 * (`appendLine`, `group`). Rounds of the three, each on fresh sessions and tables; medians of the rates.
 */
async function sessions64(context: BenchContext, database: Database): Promise<FigureRow[]> {
  const perSession = context.mode === 'quick' ? 30 : 150;
  const rounds = context.mode === 'quick' ? 2 : 3;
  const warmup = 3;
  const { pg, server } = database;
  const pool = new pg.Pool({ connectionString: server.connectionString, max: SESSIONS });
  const subjectRates: number[] = [];
  const journalRates: number[] = [];
  const floorRates: number[] = [];
  const cpu: { eventLogs: Timed['cpu']; journals: Timed['cpu']; rawInserters: Timed['cpu'] }[] = [];
  let records = 0;
  let bytes = 0;
  try {
    // Round -1 is an untimed warm-up of all three (the compiler, and each pooled connection preparing the store's
    // statements): without it, the first timed round of the event logs took several times as long as the next
    // (bench/results/history.md, "Figures that were in code comments").
    for (let r = -1; r < rounds; r += 1) {
      const tag = r < 0 ? 'warm' : String(r);
      const lines = await eventLogRound(database, pool, `sessions-${tag}`, perSession, warmup);
      const journals = await journalRound(database, pool, `journals-${tag}`, lines);
      const raw = await rawInsertRound(database.server, pool, `bench_floor_sessions_${tag}`, lines, warmup);
      if (r < 0) continue;
      records = lines.reduce((sum, own) => sum + own.length, 0);
      bytes = lines.reduce((sum, own) => sum + own.reduce((n, line) => n + line.length, 0), 0);
      subjectRates.push(records / (lines.ms / 1000));
      journalRates.push(records / (journals.ms / 1000));
      floorRates.push(records / (raw.ms / 1000));
      cpu.push({ eventLogs: lines.cpu, journals: journals.cpu, rawInserters: raw.cpu });
      const part = (label: string, timed: Timed) =>
        `${label} ${timed.ms.toFixed(0)} ms wall, CPU ${timed.cpu.clientMs.toFixed(0)} ms here + ${timed.cpu.serverMs?.toFixed(0) ?? '?'} ms server`;
      context.log(
        `  round ${r}: ${part('event logs', lines)}; ${part('bare journals', journals)}; ${part('raw inserters', raw)}`,
      );
    }
  } finally {
    await pool.end();
  }
  const subject = median(subjectRates);
  const journals = median(journalRates);
  const floor = median(floorRates);
  const rates = (list: number[]) => list.map((rate) => Math.round(rate)).join(', ');
  // Where the time goes: CPU per record, this process and the server, medians over the rounds.
  const perRecord = (pick: (round: (typeof cpu)[number]) => Timed['cpu']) => {
    const client = median(cpu.map((round) => pick(round).clientMs));
    const server = cpu.every((round) => pick(round).serverMs !== null)
      ? median(cpu.map((round) => pick(round).serverMs as number))
      : null;
    return `${Math.round((client * 1000) / records)} + ${server === null ? '?' : Math.round((server * 1000) / records)} µs`;
  };
  const cpuNote = `CPU per record (this process + the server): event logs ${perRecord((round) => round.eventLogs)}, bare journals ${perRecord((round) => round.journals)}, raw inserters ${perRecord((round) => round.rawInserters)}`;
  context.log(
    `  ${SESSIONS} sessions: event logs ${rates(subjectRates)} records/s; bare journals ${rates(journalRates)}; ` +
      `${SESSIONS} raw inserters ${rates(floorRates)} (${records} lines, ${bytes} B per round)`,
  );
  const details = {
    sessions: SESSIONS,
    perSession,
    rounds,
    records,
    bytes,
    eventLogRates: subjectRates.map((rate) => round(rate)),
    journalRates: journalRates.map((rate) => round(rate)),
    rawInserterRates: floorRates.map((rate) => round(rate)),
    cpuByRound: cpu,
  };
  return [
    {
      ...SESSIONS_ROW,
      value: round(subject),
      floor: round(floor),
      ...judge(subject / floor, 'higher', 1),
      status: 'measured',
      note: `${SESSIONS} event logs x ${perSession} awaited appendMessage each (after ${warmup} warm-up), the store's pool ${SESSIONS} connections, its commits at most 4 transactions at once (maxConcurrentCommits' default: the sessions' commits that wait share the next); the floor inserts the ${records} lines the logs committed (${Math.round(bytes / records)} B each on average), INSERT INTO (session, position, line bytea) autocommit, one at a time per connection (after ${warmup} warm-up each); medians of ${rounds} rounds after an untimed one; ${cpuNote}`,
      details,
    },
    {
      ...SESSIONS_JOURNALS_ROW,
      value: round(journals),
      floor: round(floor),
      ratio: round(journals / floor, 3),
      met: null,
      status: 'info',
      note: `the same lines through ${SESSIONS} store.openJournal(...).appendLine, group, one awaited at a time per journal: the store's share of the row above, without the event-log writer`,
      details,
    },
  ];
}

/** Lines by session, and the time the timed appends took. */
type SessionLines = Buffer[][] & Timed;

/** How long a timed part took, and the CPU the client and the server used meanwhile. */
interface Timed {
  readonly ms: number;
  readonly cpu: { clientMs: number; serverMs: number | null };
}

/** One round of the subject on fresh sessions of store `name`: the lines committed while timed, and the time. */
async function eventLogRound(
  database: Database,
  pool: InstanceType<Pg['Pool']>,
  name: string,
  perSession: number,
  warmup: number,
): Promise<SessionLines> {
  const store = await database.open(name, { pool });
  try {
    const logs = await Promise.all(
      Array.from({ length: SESSIONS }, (_, s) =>
        writer.openEventLog({ store, sessionId: `s${s}`, durability: 'group', clock: store.clock }),
      ),
    );
    const message = (s: number, i: number) => ({
      role: 'user',
      content: `session ${s} message ${i}: ${'z'.repeat(200)}`,
      id: `m${s}.${i}`,
    });
    try {
      for (let i = 0; i < warmup; i += 1) await Promise.all(logs.map((log, s) => log.appendMessage(message(s, i))));
      const before = await linePositions(pool, name);
      const cpuBefore = cpuNow(database.server);
      const start = nowMs();
      await Promise.all(
        logs.map(async (log, s) => {
          for (let i = warmup; i < warmup + perSession; i += 1) await log.appendMessage(message(s, i));
        }),
      );
      const ms = nowMs() - start;
      const cpu = cpuSince(cpuBefore, cpuNow(database.server));
      return Object.assign(await linesAfter(pool, name, before), { ms, cpu });
    } finally {
      await Promise.all(logs.map((log) => log.close()));
    }
  } finally {
    await store.close();
  }
}

/** Milliseconds for 64 bare store journals of store `name` to append `lines`, one awaited at a time per journal. */
async function journalRound(
  database: Database,
  pool: InstanceType<Pg['Pool']>,
  name: string,
  lines: Buffer[][],
): Promise<Timed> {
  const store = await database.open(name, { pool });
  try {
    const journals = await Promise.all(
      lines.map((_, s) => store.openJournal({ family: 'event', sessionId: `s${s}` }, { durability: 'group' })),
    );
    try {
      const cpuBefore = cpuNow(database.server);
      const start = nowMs();
      await Promise.all(
        journals.map(async (journal, s) => {
          for (const line of lines[s] as Buffer[]) await journal.appendLine(line);
        }),
      );
      return { ms: nowMs() - start, cpu: cpuSince(cpuBefore, cpuNow(database.server)) };
    } finally {
      await Promise.all(journals.map((journal) => journal.close()));
    }
  } finally {
    await store.close();
  }
}

/** Milliseconds for 64 connections to insert `lines` into a fresh table, one autocommit INSERT at a time each. */
async function rawInsertRound(
  server: PostgresServer,
  pool: InstanceType<Pg['Pool']>,
  table: string,
  lines: Buffer[][],
  warmup: number,
): Promise<Timed> {
  await pool.query(`CREATE TABLE ${table} (session int, position int, line bytea, PRIMARY KEY (session, position))`);
  const clients = await Promise.all(lines.map(() => pool.connect()));
  const insert = `INSERT INTO ${table} (session, position, line) VALUES ($1, $2, $3)`;
  try {
    await Promise.all(
      clients.map(async (client, s) => {
        for (let i = 0; i < warmup; i += 1) await client.query(insert, [s, -1 - i, lines[s]?.[0]]);
      }),
    );
    const cpuBefore = cpuNow(server);
    const start = nowMs();
    await Promise.all(
      clients.map(async (client, s) => {
        const own = lines[s] as Buffer[];
        for (let i = 0; i < own.length; i += 1) await client.query(insert, [s, i, own[i]]);
      }),
    );
    return { ms: nowMs() - start, cpu: cpuSince(cpuBefore, cpuNow(server)) };
  } finally {
    for (const client of clients) client.release();
  }
}

/** Each stream's last line position in store `store`, by stream name (`s<n>/events.jsonl`). */
async function linePositions(pool: InstanceType<Pg['Pool']>, store: string): Promise<Map<string, number>> {
  const result = await pool.query<{ stream: string; last: string }>(
    'SELECT stream, max(position) AS last FROM turnjournal_lines WHERE store = $1 GROUP BY stream',
    [store],
  );
  return new Map(result.rows.map((row) => [row.stream, Number(row.last)]));
}

/** The lines each session's event log committed after `before`, in order, by session number (`s<n>`). */
async function linesAfter(
  pool: InstanceType<Pg['Pool']>,
  store: string,
  before: Map<string, number>,
): Promise<Buffer[][]> {
  const result = await pool.query<{ stream: string; position: string; line: Buffer }>(
    'SELECT stream, position, line FROM turnjournal_lines WHERE store = $1 ORDER BY stream, position',
    [store],
  );
  const bySession: Buffer[][] = Array.from({ length: SESSIONS }, () => []);
  for (const row of result.rows) {
    if (Number(row.position) <= (before.get(row.stream) ?? -1)) continue;
    const session = /^s(\d+)\//.exec(row.stream);
    if (session === null) throw new Error(`unexpected stream name ${row.stream}`);
    bySession[Number(session[1])]?.push(row.line);
  }
  return bySession;
}

/** Deltas per run of a replay session: its records are nearly all `chat.delta`s, as a long agent session's are. */
const DELTAS_PER_RUN = 1000;

/**
 * Writes session `s1` of about `records` records under `root` with the event-log writer (`none` mode, one flush):
 * runs of a user message and {@link DELTAS_PER_RUN} short deltas, each finished and acknowledged. Returns its last seq.
 */
async function writeReplaySession(root: string, records: number): Promise<number> {
  const log = await writer.openEventLog({ root, sessionId: 's1', durability: 'none' });
  try {
    for (let r = 0; (log.lastSeq ?? -1) + 1 < records; r += 1) {
      const requestId = `run-${r}`;
      log.chatStarted({ requestId, content: `question ${r}` });
      log.appendMessage({ role: 'user', content: `question ${r}`, id: `${requestId}.user` });
      log.segmentStarted({ requestId, messageId: `${requestId}.a1` });
      const deltas = Math.min(DELTAS_PER_RUN, Math.max(1, records - (log.lastSeq ?? -1) - 3));
      for (let d = 0; d < deltas; d += 1) log.delta({ requestId, messageId: `${requestId}.a1`, text: `token ${d} ` });
      log.chatDone({ requestId });
      await log.ack(requestId, { clientId: 'bench' });
    }
    await log.flush();
    return log.lastSeq ?? -1;
  } finally {
    await log.close();
  }
}

/** Milliseconds from `subscribe({after})` until its 100th record, `after + 100`, arrives. */
async function replayMs(session: Session, after: number): Promise<number> {
  const begin = nowMs();
  const subscription = session.subscribe({ after });
  try {
    for (let expected = after + 1; expected <= after + 100; expected += 1) {
      const next = await subscription.next();
      if (next.done === true || next.value.kind !== 'record' || next.value.record.seq !== expected)
        throw new Error(`expected record ${expected}, got ${JSON.stringify(next.value).slice(0, 200)}`);
    }
    return nowMs() - begin;
  } finally {
    subscription.close();
  }
}

/** One replay through the store's reader, in parts: `end()`, `seekSeq(after + 1)`, then reading up to `after + 100`. */
async function readerReplayMs(
  reader: Awaited<ReturnType<PostgresStore['openReader']>>,
  after: number,
): Promise<ReaderParts> {
  const begin = nowMs();
  const end = await reader.end();
  const ended = nowMs();
  const start = await reader.seekSeq(after + 1, { to: end });
  const sought = nowMs();
  let expected = after + 1;
  reading: for await (const batch of reader.records({ from: start, to: end })) {
    for (const item of batch) {
      if (item.kind !== 'record') continue;
      const seq = item.record.value.seq;
      if (typeof seq !== 'number' || seq < expected) continue;
      if (seq !== expected) throw new Error(`expected record ${expected}, got ${seq}`);
      expected += 1;
      if (expected > after + 100) break reading;
    }
  }
  if (expected <= after + 100) throw new Error(`the reader stopped at ${expected - 1}, before ${after + 100}`);
  return { endMs: ended - begin, seekMs: sought - ended, readMs: nowMs() - sought };
}

/**
 * Reconnect replay on PostgreSQL (issue 36): a hub on the database serves `subscribe({after: head - 100})` up to its
 * 100th record from the store (its window is empty after opening), on a big session against a 1,000-record one; O(tail)
 * keeps the ratio near 1. The sessions are written as files by the event-log writer, then imported with `copyStore`
 * (batched multi-row INSERTs): 1 M records in a full run, 50 k in a quick one.
 */
async function reconnectReplay(context: BenchContext, database: Database): Promise<FigureRow[]> {
  const bigRecords = context.mode === 'quick' ? 50_000 : 1_000_000;
  const smallRecords = 1000;
  const samples = context.mode === 'quick' ? 15 : 41;
  const fileStores: FileStoreEntry = await import(
    pathToFileURL(join(dirname(WRITER_PATH), 'file-store-entry.js')).href
  );
  const load = async (name: string, records: number) => {
    const root = join(context.workDir, name);
    const begin = nowMs();
    const lastSeq = await writeReplaySession(root, records);
    const written = nowMs();
    const store = await database.open(name);
    await writer.copyStore(fileStores.openFileRecordStore({ root }), store);
    context.log(
      `  ${name}: ${lastSeq + 1} records written in ${((written - begin) / 1000).toFixed(1)} s, imported in ${((nowMs() - written) / 1000).toFixed(1)} s`,
    );
    const hub = live.openConversationHub({ store, clock: store.clock, retention: false, ringRecords: 512 });
    const openBegin = nowMs();
    const session = await hub.session('s1');
    const openMs = nowMs() - openBegin;
    const head = session.durableSeq;
    if (head !== lastSeq) throw new Error(`${name}: the hub opened at seq ${head}, the writer wrote ${lastSeq}`);
    await replayMs(session, head - 100);
    const reader = await store.openReader({ family: 'event', sessionId: 's1' });
    return { store, hub, session, head, openMs, reader };
  };
  type Side = Awaited<ReturnType<typeof load>>;
  // One series: the hub's replay on both sessions in a shuffled order, then the store reader's, timed in parts.
  const series = async (small: Side, big: Side) => {
    const hub = { small: [] as number[], big: [] as number[] };
    const parts = { small: [] as ReaderParts[], big: [] as ReaderParts[] };
    const shuffled = new ShuffledSamples(2);
    for (let i = 0; i < samples; i += 1) {
      const [s, b] = (await shuffled.sample([
        () => replayMs(small.session, small.head - 100),
        () => replayMs(big.session, big.head - 100),
      ])) as [number, number];
      hub.small.push(s);
      hub.big.push(b);
    }
    for (let i = 0; i < samples; i += 1) {
      parts.small.push(await readerReplayMs(small.reader, small.head - 100));
      parts.big.push(await readerReplayMs(big.reader, big.head - 100));
    }
    return { hub, parts };
  };
  const small = await load('replay-small', smallRecords);
  let big: Side | undefined;
  let imported: Awaited<ReturnType<typeof series>>;
  let analysed: Awaited<ReturnType<typeof series>>;
  let statistics: { before: string; after: string };
  let plans: { imported: string; analysed: string };
  try {
    big = await load('replay-big', bigRecords);
    // Right after a bulk import the table has no statistics until autovacuum analyses it (within about a minute of
    // the load): the planner's choice for seekSeq differs before and after, so both are measured.
    const before = await lastAnalysed(database);
    const importedPlan = await seekPlan(database, 'replay-big', big.head - 99);
    imported = await series(small, big);
    statistics = { before, after: await lastAnalysed(database) };
    await runAnalyze(database);
    const analysedPlan = await seekPlan(database, 'replay-big', big.head - 99);
    analysed = await series(small, big);
    plans = { imported: importedPlan, analysed: analysedPlan };
  } finally {
    for (const side of big === undefined ? [small] : [small, big]) {
      await side.reader.close();
      await side.hub.close();
      await side.store.close();
    }
  }
  const bigCount = big.head + 1;
  const quickNote =
    context.mode === 'quick' ? `; quick run: ${bigCount.toLocaleString('en-US')} records instead of 1 M` : '';
  const row = (
    taken: Awaited<ReturnType<typeof series>>,
    base: typeof REPLAY_ROW | typeof REPLAY_IMPORTED_ROW,
    state: string,
    plan: string,
  ): FigureRow => {
    const bigMs = median(taken.hub.big);
    const smallMs = median(taken.hub.small);
    const parts = (list: ReaderParts[]) =>
      `end ${round(median(list.map((p) => p.endMs)), 3)} ms, seekSeq ${round(median(list.map((p) => p.seekMs)), 3)} ms, read ${round(median(list.map((p) => p.readMs)), 3)} ms`;
    const partsNote = `through the store's reader (medians): ${parts(taken.parts.big)} on the big session; ${parts(taken.parts.small)} on the small one`;
    context.log(
      `  replay of 100 records ${state}: ${bigMs.toFixed(3)} ms on ${bigCount} records vs ${smallMs.toFixed(3)} ms on ${small.head + 1}; ${partsNote}; plan: ${plan}`,
    );
    return {
      ...base,
      name: `${base.name.replace('big session', `${bigCount.toLocaleString('en-US')}-record session`)}`,
      value: round(bigMs),
      floor: round(smallMs),
      ...judge(bigMs / smallMs, 'lower', 1.5),
      status: 'measured',
      note: `${state}; median of ${samples} subscribes to each session, sampled in a shuffled order; each session written by the event-log writer as a file, imported with copyStore; the hub's window empty after opening, so the records come from the database${quickNote}; p90 ${round(quantile(taken.hub.big, 0.9), 3)} ms vs ${round(quantile(taken.hub.small, 0.9), 3)} ms; ${partsNote}; seekSeq's plan on the big session: ${plan}`,
      details: {
        bigRecords: bigCount,
        smallRecords: small.head + 1,
        samples,
        bigOpenMs: round((big as Side).openMs),
        smallOpenMs: round(small.openMs),
        lastAnalysedBeforeImportedSeries: statistics.before,
        lastAnalysedAfterImportedSeries: statistics.after,
      },
    };
  };
  return [
    row(analysed, REPLAY_ROW, 'after ANALYZE turnjournal_lines (the statistics autovacuum keeps)', plans.analysed),
    row(
      imported,
      REPLAY_IMPORTED_ROW,
      `right after the import, before the table was analysed (last analysed: ${statistics.before} before the series, ${statistics.after} after it)`,
      plans.imported,
    ),
  ];
}

/** The parts of one replay through the store's reader, ms. */
interface ReaderParts {
  readonly endMs: number;
  readonly seekMs: number;
  readonly readMs: number;
}

/** When `turnjournal_lines` was last analysed (by autovacuum or by hand), or `never`. */
async function lastAnalysed(database: Database): Promise<string> {
  const client = new database.pg.Client({ connectionString: database.server.connectionString });
  await client.connect();
  try {
    const { rows } = await client.query<{ at: Date | null }>(
      "SELECT greatest(last_analyze, last_autoanalyze) AS at FROM pg_stat_user_tables WHERE relname = 'turnjournal_lines'",
    );
    const at = rows[0]?.at;
    return at === null || at === undefined ? 'never' : at.toISOString();
  } finally {
    await client.end();
  }
}

/**
 * The plan PostgreSQL chooses for the store's seekSeq query (`seekCommittedSeq` in packages/postgres, copied here as
 * it stands) on session `s1` of store `store`: the indexes it scans and how many rows its filters removed, in one
 * line for the row's note.
 */
async function seekPlan(database: Database, store: string, target: number): Promise<string> {
  const client = new database.pg.Client({ connectionString: database.server.connectionString });
  await client.connect();
  try {
    const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE) ${SEEK_SEQ_SQL}`, [
      store,
      's1/events.jsonl',
      target,
      Number.MAX_SAFE_INTEGER,
    ]);
    return rows
      .map((row) => row['QUERY PLAN'].trim())
      .filter((line) => /Scan using|Rows Removed|Execution Time/.test(line))
      .map((line) => line.replace(/^->\s*/, '').replace(/\s*\(cost=.*$/, ''))
      .join('; ');
  } finally {
    await client.end();
  }
}

/** Gathers the statistics of `turnjournal_lines`, as autovacuum does on its own after enough rows changed. */
async function runAnalyze(database: Database): Promise<void> {
  const client = new database.pg.Client({ connectionString: database.server.connectionString });
  await client.connect();
  try {
    await client.query('ANALYZE turnjournal_lines');
  } finally {
    await client.end();
  }
}

/** When each record reached a subscriber (`nowMs()`), by seq; `delivered(seq)` waits for one. */
class DeliveryClock {
  readonly #times = new Map<number, number>();
  readonly #waiters = new Map<number, () => void>();
  readonly done: Promise<void>;

  constructor(subscription: AsyncIterable<{ kind: string; record?: { seq: number } }>) {
    this.done = (async () => {
      for await (const event of subscription) {
        if (event.kind !== 'record' || event.record === undefined)
          throw new Error(`a subscriber got ${event.kind} instead of a record`);
        const seq = event.record.seq;
        this.#times.set(seq, nowMs());
        this.#waiters.get(seq)?.();
        this.#waiters.delete(seq);
      }
    })();
  }

  /** When record `seq` arrived, waiting for it first when it has not yet. */
  async delivered(seq: number): Promise<number> {
    const known = this.#times.get(seq);
    if (known !== undefined) return known;
    await new Promise<void>((resolve) => this.#waiters.set(seq, resolve));
    return this.#times.get(seq) as number;
  }
}

/**
 * Cross-host fan-out on PostgreSQL (issue 36): two store instances on the same store, as two hosts would open it, a
 * hub on each. The first hub owns session `s1`; the second serves it as a follower (told by LISTEN/NOTIFY, reading
 * the lines from the database). Each sample commits one message on the owner (`run.toolResult`, awaited) and times
 * from its acknowledgement until a subscriber of the follower hub holds its last record; the same for a subscriber of
 * the owner's hub is the floor. One message at a time, each waited for on both sides.
 */
async function crossHostFanOut(context: BenchContext, database: Database): Promise<FigureRow[]> {
  const messages = context.mode === 'quick' ? 100 : 500;
  const warmup = 10;
  const hostA = await database.open('fanout');
  const hostB = await database.open('fanout');
  const owner = live.openConversationHub({ store: hostA, clock: hostA.clock, retention: false });
  const follower = live.openConversationHub({ store: hostB, clock: hostB.clock, retention: false });
  const remote: number[] = [];
  const local: number[] = [];
  const sinceCall: number[] = [];
  try {
    const ownerSession = await owner.session('s1');
    if (ownerSession.role !== 'owner') throw new Error('expected the first hub to own session s1');
    const sent = await ownerSession.send({ requestId: 'r1', content: 'hi' });
    if (!sent.created) throw new Error('expected a new run');
    await ownerSession.flush();
    const followerSession = await follower.session('s1');
    if (followerSession.role !== 'follower') throw new Error(`expected a follower, got ${followerSession.role}`);
    const after = ownerSession.durableSeq;
    const remoteClock = new DeliveryClock(followerSession.subscribe({ after }));
    const localClock = new DeliveryClock(ownerSession.subscribe({ after }));
    for (let i = 0; i < messages + warmup; i += 1) {
      const id = String(i).padStart(6, '0');
      const called = nowMs();
      await sent.run.toolResult({ toolCallId: `c${id}`, output: `result ${id}: ${'y'.repeat(200)}` });
      const committed = nowMs();
      const seq = ownerSession.durableSeq;
      const [atRemote, atLocal] = await Promise.all([remoteClock.delivered(seq), localClock.delivered(seq)]);
      if (i >= warmup) {
        remote.push(atRemote - committed);
        local.push(atLocal - committed);
        sinceCall.push(atRemote - called);
      }
    }
    await sent.run.done();
  } finally {
    await follower.close();
    await owner.close({ runs: 'cancel' });
    await hostB.close();
    await hostA.close();
  }
  const r50 = median(remote);
  const r99 = quantile(remote, 0.99);
  context.log(
    `  cross-host: committed → delivered p50 ${r50.toFixed(3)} ms, p99 ${r99.toFixed(3)} ms on the follower; ` +
      `${median(local).toFixed(3)} / ${quantile(local, 0.99).toFixed(3)} ms on the owner; call → delivered p50 ${median(sinceCall).toFixed(3)} ms`,
  );
  const note = `${messages} run.toolResult() on the owner hub, one at a time (after ${warmup} warm-up), each waited for on both subscribers; two store instances of one store on one server over Unix sockets, in one process (no network between the "hosts"); follower poll fallback 25 ms; from the owner's call to the follower's delivery p50 ${round(median(sinceCall), 3)} ms, p99 ${round(quantile(sinceCall, 0.99), 3)} ms`;
  const details = {
    messages,
    warmup,
    p50Ms: round(r50),
    p99Ms: round(r99),
    ownerP50Ms: round(median(local)),
    ownerP99Ms: round(quantile(local, 0.99)),
    callToDeliveredP50Ms: round(median(sinceCall)),
    callToDeliveredP99Ms: round(quantile(sinceCall, 0.99)),
  };
  // No floor: the owner's own subscriber holds the record as its commit is acknowledged (in the same process, a few
  // µs either side of it), so it is reported in the details rather than divided by.
  const row = (base: typeof FANOUT_P50_ROW | typeof FANOUT_P99_ROW, value: number): FigureRow => ({
    ...base,
    value: round(value),
    floor: null,
    ratio: null,
    met: null,
    status: 'info',
    note,
    details,
  });
  return [row(FANOUT_P50_ROW, r50), row(FANOUT_P99_ROW, r99)];
}

/** CPU time (ms) used so far by this process and by the server's processes (postmaster, backends, its helpers). */
interface CpuReading {
  readonly client: number;
  readonly server: number | null;
}

/** Clock ticks per second of `/proc/<pid>/stat`'s times, read once; null off Linux. */
let ticksPerSecond: number | null | undefined;

/** Reads the CPU time this process and the server have used; `server` is null where `/proc` cannot tell. */
function cpuNow(server: PostgresServer): CpuReading {
  const usage = process.cpuUsage();
  return { client: (usage.user + usage.system) / 1000, server: serverCpuMs(server) };
}

/**
 * The server's CPU time: the postmaster's own and its reaped children's, plus every live child's (backends, WAL
 * writer, checkpointer). A backend that exits between two readings moves from the second term to the first.
 */
function serverCpuMs(server: PostgresServer): number | null {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || null;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      ticksPerSecond = null;
    }
  }
  if (ticksPerSecond === null) return null;
  let postmaster: number;
  try {
    postmaster = Number(readFileSync(join(server.socketDir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' && (error as NodeJS.ErrnoException).code !== 'EACCES')
      throw error;
    return null;
  }
  // Fields after the command name (which may hold spaces): state ppid … utime stime cutime cstime at 14–17.
  const fields = (pid: string): string[] | null => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    } catch (error) {
      // A process that exits while the directory is listed.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ESRCH')
        return null;
      throw error;
    }
  };
  const own = fields(String(postmaster));
  if (own === null) return null;
  // Live processes by their scheduler run time (exact, ns), reaped children by the postmaster's tick counts: the tick
  // counts of live backends lagged far behind their run time on the benchmark machine (bench/results/history.md,
  // "Figures that were in code comments").
  let ms = ((Number(own[13]) + Number(own[14])) * 1000) / ticksPerSecond;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const child = pid === String(postmaster) ? own : fields(pid);
    if (child === null || (pid !== String(postmaster) && Number(child[1]) !== postmaster)) continue;
    const runNs = schedulerRunNs(pid);
    if (runNs !== null) ms += runNs / 1e6;
  }
  return ms;
}

/** Nanoseconds process `pid` has run on a CPU (`/proc/<pid>/schedstat`), or null when it has exited. */
function schedulerRunNs(pid: string): number | null {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ESRCH')
      return null;
    throw error;
  }
}

/** CPU used between two readings, ms. */
function cpuSince(before: CpuReading, after: CpuReading): { clientMs: number; serverMs: number | null } {
  return {
    clientMs: round(after.client - before.client),
    serverMs: before.server === null || after.server === null ? null : round(after.server - before.server),
  };
}
