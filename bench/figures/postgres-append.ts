import type { PostgresServer } from '@turnjournal/test-support/postgres-server';
import { ShuffledSamples } from '../lib/order.js';
import { type Pg, type Postgres, withPostgresServer } from '../lib/postgres-figure.js';
import { judge, median, nowMs, quantile, round } from '../lib/stats.js';
import type { BenchContext, Figure, FigureRow } from '../lib/types.js';
import { pendingRow } from './pending.js';

/** 100 appenders on one stream, each awaiting its append before the next. */
const APPENDERS = 100;

/** A `message_append` event line of about 300 bytes, `seq` `i`. */
function eventLine(i: number): Buffer {
  const record = {
    seq: i,
    ts: '2026-06-19T03:14:08.050000+00:00',
    type: 'message_append',
    payload: { message: { role: 'assistant', content: `answer ${i}: ${'x'.repeat(200)}`, id: `m${i}` } },
  };
  return Buffer.from(`${JSON.stringify(record)}\n`);
}

/**
 * The PostgreSQL store (`@turnjournal/postgres`, issue 36) on a throwaway server the figure starts (Debian's binaries,
 * as the tests do; `fsync` and `synchronous_commit` on): a durable `group` append awaited one at a time against the
 * database's floor, one autocommit `INSERT` of the same bytes over one connection, sampled in a shuffled order, median
 * and p99; and 100 appenders on one stream in `group` mode against the same in per-record `every` mode, with 100 raw
 * autocommit inserters on 100 connections for scale. A server that cannot start makes the rows say why (skipped).
 */
export const postgresAppend: Figure = {
  id: 'postgres-append',
  title: 'PostgreSQL store: durable append vs raw INSERT; 100 concurrent appends to one stream',
  run(context): Promise<FigureRow[]> {
    return withPostgresServer(
      context,
      (reason) => [
        pendingRow({ ...MEDIAN_ROW, floor: null, reason }),
        pendingRow({ ...P99_ROW, floor: null, reason }),
        pendingRow({ ...CONCURRENT_ROW, floor: null, reason }),
      ],
      async ({ server, postgres, pg }) => [
        ...(await singleAppends(context, server, postgres, pg)),
        await concurrentAppends(context, server, postgres, pg),
      ],
    );
  },
};

const MEDIAN_ROW = {
  id: 'postgres-append-median',
  name: 'PostgreSQL durable append latency, median (group, one append awaited at a time)',
  unit: 'ms',
  ratioDefinition: 'value / floor (latency); floor = one autocommit INSERT of the same bytes over one connection',
  direction: 'lower',
  target: 'ratio <= 1.3',
} as const;
const P99_ROW = {
  ...MEDIAN_ROW,
  id: 'postgres-append-p99',
  name: 'PostgreSQL durable append latency, p99 (group, one append awaited at a time)',
  target: 'none (reported)',
} as const;
const CONCURRENT_ROW = {
  id: 'postgres-concurrent-100',
  name: 'PostgreSQL group commit, 100 concurrent appenders on one stream',
  unit: 'records/s',
  ratioDefinition: 'value / floor (throughput); floor = the same 100 appenders in per-record `every` mode',
  direction: 'higher',
  target: 'ratio >= 5',
} as const;

async function singleAppends(
  context: BenchContext,
  server: PostgresServer,
  postgres: Postgres,
  pg: Pg,
): Promise<FigureRow[]> {
  const samples = context.mode === 'quick' ? 300 : 3000;
  const warmup = 50;
  const store = postgres.openPostgresRecordStore({ connectionString: server.connectionString, store: 'bench' });
  const journal = await store.openJournal({ family: 'event', sessionId: 'single' }, { durability: 'group' });
  const floorClient = new pg.Client({ connectionString: server.connectionString });
  await floorClient.connect();
  await floorClient.query('CREATE TABLE bench_floor (position bigint PRIMARY KEY, line bytea NOT NULL)');
  const subject: number[] = [];
  const floor: number[] = [];
  const shuffled = new ShuffledSamples(2);
  let bytes = 0;
  try {
    for (let i = 0; i < samples + warmup; i += 1) {
      const line = eventLine(i);
      bytes = line.length;
      const [s, f] = (await shuffled.sample([
        () => journal.appendLine(line),
        () => floorClient.query('INSERT INTO bench_floor (position, line) VALUES ($1, $2)', [i, line]),
      ])) as [number, number];
      if (i >= warmup) {
        subject.push(s);
        floor.push(f);
      }
    }
  } finally {
    await journal.close();
    await store.close();
    await floorClient.end();
  }
  const s50 = median(subject);
  const f50 = median(floor);
  const s99 = quantile(subject, 0.99);
  const f99 = quantile(floor, 0.99);
  context.log(
    `  append of ${bytes} B: median ${s50.toFixed(3)} ms, p99 ${s99.toFixed(3)} ms; ` +
      `raw INSERT: median ${f50.toFixed(3)} ms, p99 ${f99.toFixed(3)} ms`,
  );
  const note = `store.openJournal(...).appendLine in group mode vs INSERT INTO (position bigint PRIMARY KEY, line bytea) autocommit, over the same Unix socket, sampled in a shuffled order; ${samples} samples after ${warmup} warm-up; ${bytes}-byte lines`;
  const details = { samples, warmup, lineBytes: bytes, p50Ms: round(s50), floorP50Ms: round(f50) };
  return [
    {
      ...MEDIAN_ROW,
      value: round(s50),
      floor: round(f50),
      ...judge(s50 / f50, 'lower', 1.3),
      status: 'measured',
      note,
      details: { ...details, p99Ms: round(s99), floorP99Ms: round(f99) },
    },
    {
      ...P99_ROW,
      value: round(s99),
      floor: round(f99),
      ratio: round(s99 / f99, 3),
      met: null,
      status: 'info',
      note,
      details: { ...details, p99Ms: round(s99), floorP99Ms: round(f99) },
    },
  ];
}

async function concurrentAppends(
  context: BenchContext,
  server: PostgresServer,
  postgres: Postgres,
  pg: Pg,
): Promise<FigureRow> {
  const records = context.mode === 'quick' ? 1000 : 3000;
  const perAppender = records / APPENDERS;
  const lines = Array.from({ length: records }, (_, i) => eventLine(i));
  const store = postgres.openPostgresRecordStore({ connectionString: server.connectionString, store: 'bench' });
  const appenders = async (durability: 'every' | 'group') => {
    const journal = await store.openJournal({ family: 'event', sessionId: durability }, { durability });
    try {
      const start = nowMs();
      await Promise.all(
        Array.from({ length: APPENDERS }, async (_, a) => {
          for (let i = 0; i < perAppender; i += 1) await journal.appendLine(lines[a * perAppender + i] as Buffer);
        }),
      );
      return records / ((nowMs() - start) / 1000);
    } finally {
      await journal.close();
    }
  };
  let every: number;
  let group: number;
  try {
    every = await appenders('every');
    group = await appenders('group');
  } finally {
    await store.close();
  }
  // For scale: what the database does with 100 clients inserting on their own, one autocommit INSERT each.
  const pool = new pg.Pool({ connectionString: server.connectionString, max: APPENDERS });
  let raw: number;
  try {
    await pool.query('CREATE TABLE bench_floor_concurrent (position bigint PRIMARY KEY, line bytea NOT NULL)');
    const clients = await Promise.all(Array.from({ length: APPENDERS }, () => pool.connect()));
    const start = nowMs();
    await Promise.all(
      clients.map(async (client, a) => {
        for (let i = 0; i < perAppender; i += 1) {
          const position = a * perAppender + i;
          await client.query('INSERT INTO bench_floor_concurrent (position, line) VALUES ($1, $2)', [
            position,
            lines[position],
          ]);
        }
      }),
    );
    raw = records / ((nowMs() - start) / 1000);
    for (const client of clients) client.release();
  } finally {
    await pool.end();
  }
  context.log(
    `  ${APPENDERS} appenders: group ${group.toFixed(0)} rec/s, every ${every.toFixed(0)} rec/s; ` +
      `${APPENDERS} raw autocommit inserters ${raw.toFixed(0)} rec/s`,
  );
  return {
    ...CONCURRENT_ROW,
    value: round(group),
    floor: round(every),
    ...judge(group / every, 'higher', 5),
    status: 'measured',
    note: `${APPENDERS} appenders x ${perAppender} awaited appendLine each on one journal; ${APPENDERS} raw autocommit inserters on ${APPENDERS} connections ${round(raw)} records/s (group = ${round(group / raw, 3)} x)`,
    details: { records, appenders: APPENDERS, group: round(group), every: round(every), rawInserters: round(raw) },
  };
}
