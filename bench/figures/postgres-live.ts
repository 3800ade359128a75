import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type PostgresServer, startPostgres } from '@turnjournal/test-support/postgres-server';
import { live } from '../lib/live.js';
import { ShuffledSamples } from '../lib/order.js';
import { median, quantile, round } from '../lib/stats.js';
import type { BenchContext, Figure, FigureRow } from '../lib/types.js';
import { pendingRow } from './pending.js';

type Postgres = typeof import('../../packages/postgres/dist/index.js');
type Pg = typeof import('../../packages/postgres/node_modules/@types/pg/index.js');
type PostgresStore = ReturnType<Postgres['openPostgresRecordStore']>;
type Hub = ReturnType<typeof live.openConversationHub>;
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
 * The live hub on PostgreSQL (issue 36), on a throwaway server the figure starts (Debian's binaries, `fsync` and
 * `synchronous_commit` on, as `postgres-append` does): the hub's committed message on the file store and on
 * PostgreSQL side by side. A server that cannot start makes every row say why (skipped).
 */
export const postgresLive: Figure = {
  id: 'postgres-live',
  title: 'live hub on PostgreSQL: committed message vs the file store',
  async run(context): Promise<FigureRow[]> {
    let server: PostgresServer;
    try {
      server = startPostgres();
    } catch (error) {
      const reason = `skipped: ${error instanceof Error ? error.message : String(error)}`;
      context.log(`  ${reason}`);
      return SKIPPABLE_ROWS.map((row) => pendingRow({ ...row, floor: null, reason }));
    }
    try {
      const postgres: Postgres = await import(
        pathToFileURL(join(context.root, 'packages', 'postgres', 'dist', 'index.js')).href
      );
      // node-postgres as the store resolves it: the same client library for subject and floor.
      const pg = createRequire(join(context.root, 'packages', 'postgres', 'package.json'))('pg') as Pg;
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
      return [...(await committedMessages(context, database))];
    } finally {
      server.stop();
    }
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

/** The rows listed as skipped when the server cannot start. */
const SKIPPABLE_ROWS = [MESSAGE_MEDIAN_ROW, MESSAGE_P99_ROW];

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
