/**
 * The live hub against the stores a team would otherwise keep resumable chat in (issue 39): Redis Streams and pub/sub
 * (ioredis; the append-only file synced `always` for the durable message, `everysec` for reads and fan-out) and a
 * PostgreSQL table (node-postgres, `synchronous_commit` on), each server started by the bench from Debian's packages
 * and measured in the same run, on the same bytes, in one Node process. Ratios are hub ÷ peer: below 1 the hub is
 * faster.
 */
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import {
  type CommittedSamples,
  FULL_WARM_UP,
  LinesFollower,
  type MessageSeries,
  openFloorFile,
  QUICK_WARM_UP,
  sampleCommittedMessages,
} from '../lib/committed-messages.js';
import { live } from '../lib/live.js';
import { ShuffledSamples } from '../lib/order.js';
import { type PostgresPeer, type RedisPeer, startPostgresPeer, startRedisPeer } from '../lib/peer-servers.js';
import type { Peer } from '../lib/peers.js';
import { coldOpenMs, firstRecordMs, writeSessionLog } from '../lib/replay.js';
import { gc, judge, latencyInfoRow, median, nowMs, quantile, round } from '../lib/stats.js';
import type { BenchContext, Figure, FigureRow } from '../lib/types.js';

const SESSION = 's1';

/** A row comparing the hub with a peer (`ratio = hub / peer`, lower is better), or the peer listed as skipped. */
function peerRow(
  peer: Peer<unknown>,
  row: {
    readonly id: string;
    readonly name: string;
    readonly unit: string;
    readonly hub: number;
    readonly peer: number | null;
    readonly maxRatio: number | null;
    readonly direction?: 'lower' | 'higher';
    readonly note: string;
    readonly details?: Readonly<Record<string, unknown>>;
  },
): FigureRow {
  const direction = row.direction ?? 'lower';
  const base = {
    id: row.id,
    name: row.name,
    value: round(row.hub),
    unit: row.unit,
    direction,
    ...(row.details === undefined ? {} : { details: row.details }),
  };
  if (!peer.ok || row.peer === null)
    return {
      ...base,
      floor: null,
      ratio: null,
      target:
        row.maxRatio === null ? 'none (reported)' : `ratio ${direction === 'lower' ? '<=' : '>='} ${row.maxRatio}`,
      met: null,
      status: 'info',
      note: `${peer.ok ? 'peer not measured' : peer.reason}; ${row.note}`,
    };
  const ratio = row.hub / row.peer;
  return {
    ...base,
    floor: round(row.peer),
    floorUnit: `${row.unit}, ${peer.version}`,
    ratioDefinition:
      direction === 'lower' ? 'value / peer (latency); lower is better' : 'value / peer (throughput); higher is better',
    ...(row.maxRatio === null
      ? { target: 'none (reported)', ratio: round(ratio, 3), met: null, status: 'info' as const }
      : {
          target: `ratio ${direction === 'lower' ? '<=' : '>='} ${row.maxRatio}`,
          ...judge(ratio, direction, row.maxRatio),
          status: 'measured' as const,
        }),
    note: row.note,
  };
}

async function stopAll(...peers: Peer<{ stop(): Promise<void> }>[]): Promise<void> {
  for (const peer of peers) if (peer.ok) await peer.value.stop();
}

function logPeer(context: BenchContext, name: string, peer: Peer<unknown>): void {
  context.log(`  ${name}: ${peer.ok ? peer.version : peer.reason}`);
}

// ---- the durable committed message --------------------------------------------------------------------------------

/**
 * One committed message (`run.toolResult`: `tool.result` and its `message_append`, durable before it resolves)
 * against the same bytes as one Redis `XADD` on a server whose append-only file syncs before every reply
 * (`appendfsync always`) and one PostgreSQL `INSERT` committed on its own (`synchronous_commit` on), and the
 * non-blocking floor (`writeSync`, then `fdatasync` through libuv's thread pool): one sample of each per message in a
 * shuffled order. Targets (issue 39): median and p99 ≤ 0.85 × Redis and ≤ 0.7 × PostgreSQL, median ≤ 1.3 × the floor.
 */
export const liveMessagePeers: Figure = {
  id: 'live-message-peers',
  title: 'live committed message vs Redis XADD (AOF always) and PostgreSQL INSERT commit',
  async run(context): Promise<FigureRow[]> {
    const messages = context.mode === 'quick' ? 100 : 600;
    const warmUp = context.mode === 'quick' ? QUICK_WARM_UP : FULL_WARM_UP;
    const redis = await startRedisPeer({ appendfsync: 'always' });
    const postgres = await startPostgresPeer();
    logPeer(context, 'Redis', redis);
    logPeer(context, 'PostgreSQL', postgres);
    const root = join(context.workDir, 'hub');
    const hub = live.openConversationHub({ root, retention: false });
    const floorFile = openFloorFile(join(context.workDir, 'async-floor.jsonl'));
    let sampled: CommittedSamples;
    try {
      if (postgres.ok)
        await postgres.value.client.query(
          'CREATE TABLE chat_messages (session_id text NOT NULL, seq bigint NOT NULL, line text NOT NULL, PRIMARY KEY (session_id, seq))',
        );
      const session = await hub.session(SESSION);
      const sent = await session.send({ requestId: 'r1', content: 'hi' });
      if (!sent.created) throw new Error('expected a new run');
      await session.flush();
      let seq = 0;
      const others: MessageSeries[] = [floorFile.nonBlocking];
      if (redis.ok) others.push(({ text }) => redis.value.client.xadd('chat:s1', '*', 'line', text));
      if (postgres.ok)
        others.push(({ text }) => {
          seq += 1;
          return postgres.value.client.query({
            name: 'insert-message',
            text: 'INSERT INTO chat_messages (session_id, seq, line) VALUES ($1, $2, $3)',
            values: [SESSION, seq, text],
          });
        });
      sampled = await sampleCommittedMessages(sent.run, join(root, SESSION, 'events.jsonl'), messages, others, warmUp);
      await sent.run.done();
    } finally {
      floorFile.close();
      await hub.close();
      await stopAll(redis, postgres);
    }
    const { hub: hubMs, messageBytes } = sampled;
    const [floorMs = [], ...peerMs] = sampled.others;
    const redisMs = redis.ok ? (peerMs.shift() ?? []) : [];
    const postgresMs = postgres.ok ? (peerMs.shift() ?? []) : [];
    const h50 = median(hubMs);
    const h99 = quantile(hubMs, 0.99);
    const f50 = median(floorMs);
    context.log(
      `  hub ${h50.toFixed(3)} / ${h99.toFixed(3)} ms (median / p99), Redis ${median(redisMs).toFixed(3)} / ${quantile(redisMs, 0.99).toFixed(3)}, PostgreSQL ${median(postgresMs).toFixed(3)} / ${quantile(postgresMs, 0.99).toFixed(3)}, non-blocking floor ${f50.toFixed(3)} / ${quantile(floorMs, 0.99).toFixed(3)} (${messageBytes} B)`,
    );
    const note = `${messages} messages of ${messageBytes} B, one sample of the hub, each peer and the floor per message in a shuffled order, after ${warmUp} untimed messages (each series as often)`;
    // The first messages after the hub started, sampled in the same loop: V8 is still compiling the hub's code.
    const startHub = sampled.afterStart.hub;
    const [startFloor = []] = sampled.afterStart.others;
    const details = { messages, messageBytes };
    return [
      peerRow(redis, {
        id: 'live-message-vs-redis-median',
        name: `live committed message vs Redis XADD with AOF always, median (${messageBytes} B)`,
        unit: 'ms',
        hub: h50,
        peer: redis.ok ? median(redisMs) : null,
        maxRatio: 0.85,
        note,
        details,
      }),
      peerRow(redis, {
        id: 'live-message-vs-redis-p99',
        name: 'live committed message vs Redis XADD with AOF always, p99',
        unit: 'ms',
        hub: h99,
        peer: redis.ok ? quantile(redisMs, 0.99) : null,
        maxRatio: 0.85,
        note: `p99 of the same ${messages} samples`,
      }),
      peerRow(postgres, {
        id: 'live-message-vs-postgres-median',
        name: 'live committed message vs PostgreSQL INSERT commit, median',
        unit: 'ms',
        hub: h50,
        peer: postgres.ok ? median(postgresMs) : null,
        maxRatio: 0.7,
        note: 'one INSERT of the same bytes per transaction (autocommit), prepared, over the Unix socket',
      }),
      peerRow(postgres, {
        id: 'live-message-vs-postgres-p99',
        name: 'live committed message vs PostgreSQL INSERT commit, p99',
        unit: 'ms',
        hub: h99,
        peer: postgres.ok ? quantile(postgresMs, 0.99) : null,
        maxRatio: 0.7,
        note: `p99 of the same ${messages} samples`,
      }),
      {
        id: 'live-message-vs-async-floor',
        name: 'live committed message vs raw append + fdatasync through the thread pool (non-blocking floor), median',
        value: round(h50),
        unit: 'ms',
        floor: round(f50),
        ratioDefinition: 'value / floor (latency); lower is better',
        direction: 'lower',
        target: 'ratio <= 1.3',
        ...judge(h50 / f50, 'lower', 1.3),
        status: 'measured',
        note: `the floor's p99 ${round(quantile(floorMs, 0.99), 3)} ms; same shuffled loop`,
      },
      ...(startHub.length === 0
        ? []
        : [
            latencyInfoRow({
              id: 'live-message-after-start-vs-async-floor',
              name: `live committed message, the first ${startHub.length} messages after the hub started, median vs the non-blocking floor`,
              value: median(startHub),
              floor: median(startFloor),
              note: `messages 10 to ${10 + startHub.length} of the same loop, while V8 compiles the hub's code; p99 ${round(quantile(startHub, 0.99), 3)} ms, the floor's ${round(quantile(startFloor, 0.99), 3)} ms`,
            }),
          ]),
    ];
  },
};

// ---- replay from disk and cold open -------------------------------------------------------------------------------

/**
 * The generated session: runs of a user message and 1,000 deltas of 100 characters, few runs, so the checkpoints (the
 * whole message list) stay small.
 */
const replayLog = (records: number) => ({ deltaText: 'token '.repeat(16).slice(0, 100), deltasPerRun: 1000, records });

/** Each line of the log with its seq, in batches, for loading the same bytes into a peer. */
async function* logLines(file: string, batch: number): AsyncGenerator<{ seqs: number[]; lines: string[] }> {
  let seqs: number[] = [];
  let lines: string[] = [];
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY })) {
    const seq = /"seq":(\d+)/.exec(line)?.[1];
    if (seq === undefined) continue;
    seqs.push(Number(seq));
    lines.push(line);
    if (seqs.length >= batch) {
      yield { seqs, lines };
      seqs = [];
      lines = [];
    }
  }
  if (seqs.length > 0) yield { seqs, lines };
}

/** Redis stream ids of the loaded log: `<seq + 1>-0`, so that a cursor maps to an exclusive `XRANGE` start. */
const streamId = (seq: number) => `${seq + 1}-0`;

/**
 * Reconnect replay from disk (issue 39): on a session of 1 M records (100 k in quick runs), a client with the cursor
 * `lastSeq - 100` gets its first record from the hub (`subscribe({after})`, the window empty after opening, so the
 * records come from the log) against Redis `XRANGE key (cursor + COUNT 100` and PostgreSQL
 * `SELECT … WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT 100`, both holding the same lines; one sample of
 * each per round in a shuffled order. And the cold open of that session (`hub.session` on a new hub) against one of
 * 1 k records.
 */
export const liveReplayPeers: Figure = {
  id: 'live-replay-peers',
  title: 'live reconnect replay from a 1 M-record log vs Redis XRANGE and PostgreSQL SELECT; cold open 1 M vs 1 k',
  async run(context): Promise<FigureRow[]> {
    const quick = context.mode === 'quick';
    const records = quick ? 100_000 : 1_000_000;
    const samples = quick ? 41 : 201;
    // The peers' clients are warm from loading a million lines; the hub's read path gets as many untimed rounds.
    const warmUps = quick ? 20 : 100;
    const openSamples = quick ? 3 : 9;
    const bigRoot = join(context.workDir, 'big');
    const smallRoot = join(context.workDir, 'small');
    const big = await writeSessionLog(bigRoot, SESSION, replayLog(records));
    const small = await writeSessionLog(smallRoot, SESSION, replayLog(1000));
    const file = join(bigRoot, SESSION, 'events.jsonl');
    context.log(`  log of ${big.lastSeq + 1} records, ${(big.size / 1e6).toFixed(1)} MB`);
    const redis = await startRedisPeer({ appendfsync: 'everysec' });
    const postgres = await startPostgresPeer();
    logPeer(context, 'Redis', redis);
    logPeer(context, 'PostgreSQL', postgres);
    const hubMs: number[] = [];
    const redisMs: number[] = [];
    const postgresMs: number[] = [];
    const writtenMs: number[] = [];
    const openBig: number[] = [];
    const openSmall: number[] = [];
    const hub = live.openConversationHub({ root: bigRoot, retention: false, ringRecords: 512 });
    try {
      if (postgres.ok)
        await postgres.value.client.query(
          'CREATE TABLE chat_messages (session_id text NOT NULL, seq bigint NOT NULL, line text NOT NULL, PRIMARY KEY (session_id, seq))',
        );
      for await (const { seqs, lines } of logLines(file, 10_000)) {
        if (redis.ok) {
          const pipeline = redis.value.client.pipeline();
          for (const [i, seq] of seqs.entries()) pipeline.xadd('chat:s1', streamId(seq), 'line', lines[i] as string);
          await pipeline.exec();
        }
        if (postgres.ok)
          await postgres.value.client.query(
            'INSERT INTO chat_messages (session_id, seq, line) SELECT $1, s, l FROM unnest($2::bigint[], $3::text[]) AS t(s, l)',
            [SESSION, seqs, lines],
          );
      }
      if (postgres.ok) await postgres.value.client.query('VACUUM ANALYZE chat_messages');
      const session = await hub.session(SESSION);
      const after = session.durableSeq - 100;
      const xrange = async (peer: RedisPeer) => {
        const entries = await peer.client.xrange('chat:s1', `(${streamId(after)}`, '+', 'COUNT', 100);
        if (entries[0]?.[0] !== streamId(after + 1)) throw new Error(`XRANGE answered ${entries[0]?.[0]}`);
      };
      const select = async (peer: PostgresPeer) => {
        const result = await peer.client.query({
          name: 'replay',
          text: 'SELECT seq, line FROM chat_messages WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT 100',
          values: [SESSION, after],
        });
        if (Number(result.rows[0]?.seq) !== after + 1) throw new Error(`SELECT answered ${result.rows[0]?.seq}`);
      };
      const series = [
        () => firstRecordMs(session, after),
        () => (redis.ok ? xrange(redis.value) : undefined),
        () => (postgres.ok ? select(postgres.value) : undefined),
      ];
      const shuffled = new ShuffledSamples(3);
      for (let i = 0; i < warmUps; i += 1) await shuffled.sample(series);
      for (let i = 0; i < samples; i += 1) {
        const [h, r, p] = await shuffled.sample(series);
        hubMs.push(h as number);
        redisMs.push(r as number);
        postgresMs.push(p as number);
      }
      // A live session has written since it opened, so its log ends in pre-allocated space (NULs, up to 64 KiB,
      // TJ-DUR-035) that the reader's end includes: the same replay once one run has been written.
      const sent = await session.send({ requestId: 'bench-written', content: 'hi' });
      if (!sent.created) throw new Error('expected a new run');
      await sent.run.done();
      await session.flush();
      const writtenAfter = session.durableSeq - 100;
      for (let i = 0; i < warmUps; i += 1) await firstRecordMs(session, writtenAfter);
      for (let i = 0; i < samples; i += 1) writtenMs.push(await firstRecordMs(session, writtenAfter));
      await hub.close();
      const opens = new ShuffledSamples(2);
      await opens.sample([() => coldOpenMs(bigRoot, SESSION), () => coldOpenMs(smallRoot, SESSION)]);
      for (let i = 0; i < openSamples; i += 1) {
        const [b, s] = await opens.sample([() => coldOpenMs(bigRoot, SESSION), () => coldOpenMs(smallRoot, SESSION)]);
        openBig.push(b as number);
        openSmall.push(s as number);
      }
    } finally {
      await hub.close();
      await stopAll(redis, postgres);
    }
    const h50 = median(hubMs);
    const b50 = median(openBig);
    const s50 = median(openSmall);
    const size = quick ? '100 k-record' : '1 M-record';
    context.log(
      `  first record: hub ${h50.toFixed(3)} ms (${median(writtenMs).toFixed(3)} ms once written), Redis ${median(redisMs).toFixed(3)}, PostgreSQL ${median(postgresMs).toFixed(3)}; cold open ${b50.toFixed(1)} ms vs ${s50.toFixed(1)} ms`,
    );
    const scaled = quick ? ' (quick run: 100 k records instead of 1 M)' : '';
    const note = `cursor lastSeq-100 on a log of ${big.lastSeq + 1} records (${(big.size / 1e6).toFixed(1)} MB)${scaled}; median of ${samples} samples of each, shuffled, after ${warmUps} untimed rounds; peers hold the same lines`;
    return [
      peerRow(redis, {
        id: 'live-replay-vs-redis',
        name: `live reconnect replay from disk, ${size} session, first record vs Redis XRANGE (COUNT 100)`,
        unit: 'ms',
        hub: h50,
        peer: redis.ok ? median(redisMs) : null,
        maxRatio: 0.8,
        note: `${note}; p90 hub ${round(quantile(hubMs, 0.9), 3)} ms, Redis ${round(quantile(redisMs, 0.9), 3)} ms`,
        details: { records: big.lastSeq + 1, bytes: big.size, samples },
      }),
      peerRow(postgres, {
        id: 'live-replay-vs-postgres',
        name: `live reconnect replay from disk, ${size} session, first record vs PostgreSQL SELECT … LIMIT 100`,
        unit: 'ms',
        hub: h50,
        peer: postgres.ok ? median(postgresMs) : null,
        maxRatio: 0.6,
        note: `primary key (session_id, seq), prepared, over the Unix socket; p90 ${round(quantile(postgresMs, 0.9), 3)} ms`,
      }),
      peerRow(redis, {
        id: 'live-replay-written-vs-redis',
        name: `live reconnect replay from disk, ${size} session that has written since it opened (log ends in pre-allocated space), first record vs Redis XRANGE`,
        unit: 'ms',
        hub: median(writtenMs),
        peer: redis.ok ? median(redisMs) : null,
        maxRatio: null,
        note: `after one run written through the hub and flushed; ${samples} samples of the hub alone after ${warmUps} untimed, against the Redis median above`,
      }),
      {
        id: 'live-cold-open',
        name: `live cold session open (hub.session on a new hub), ${size} log vs 1 k-record log`,
        value: round(b50),
        unit: 'ms',
        floor: round(s50),
        floorUnit: `ms on a log of ${small.lastSeq + 1} records`,
        ratioDefinition: 'value / floor (latency); lower is better',
        direction: 'lower',
        target: 'ratio <= 2',
        ...judge(b50 / s50, 'lower', 2),
        status: 'measured',
        note: `median of ${openSamples} opens of each, shuffled, a new hub each (page cache warm)${scaled}`,
        details: { openBigMs: openBig.map((ms) => round(ms)), openSmallMs: openSmall.map((ms) => round(ms)) },
      },
    ];
  },
};

// ---- fan-out ------------------------------------------------------------------------------------------------------

/**
 * Fan-out to 1,000 subscribers of one session (issue 39): deliveries per second, from the first delta until every
 * subscriber holds the last one, through the hub's `session.listen` callbacks (and, as information, its `for await`
 * subscriptions), against Redis pub/sub delivering the same
 * lines to 1,000 callbacks on a subscriber connection (what a resumable-stream server registers per reader), the
 * publisher pipelining its `PUBLISH`es.
 */
export const liveFanoutPeers: Figure = {
  id: 'live-fanout-peers',
  title: 'live fan-out to 1,000 subscribers vs Redis pub/sub with callbacks',
  async run(context): Promise<FigureRow[]> {
    const subscribers = 1000;
    const messages = context.mode === 'quick' ? 300 : 2000;
    const redis = await startRedisPeer({ appendfsync: 'everysec' });
    logPeer(context, 'Redis', redis);
    let hubRate = 0;
    let listenRate: number | null = null;
    let redisRate: number | null = null;
    let lineBytes = 0;
    try {
      const hubRun = await hubFanout(join(context.workDir, 'hub'), subscribers, messages, 'iterate');
      hubRate = hubRun.rate;
      lineBytes = hubRun.lineBytes;
      // Builds before `session.listen` (TJ_BENCH_LIVE) have no listener row.
      const listens = typeof (live as { Listening?: unknown }).Listening === 'function';
      if (listens)
        listenRate = (await hubFanout(join(context.workDir, 'listen'), subscribers, messages, 'listen')).rate;
      if (redis.ok) redisRate = await redisFanout(redis.value, subscribers, messages, lineBytes);
    } finally {
      await stopAll(redis);
    }
    context.log(
      `  deliveries/s: hub for await ${Math.round(hubRate)}, hub listen ${listenRate === null ? '—' : Math.round(listenRate)}, Redis ${redisRate === null ? '—' : Math.round(redisRate)}`,
    );
    const sizes = `${messages} deltas of ${lineBytes} B${context.mode === 'quick' ? ' (quick run: 300 instead of 2,000)' : ''}`;
    return [
      ...(listenRate === null
        ? []
        : [
            peerRow(redis, {
              id: 'live-fanout-listen-vs-redis',
              name: `live fan-out to ${subscribers} subscribers (session.listen), deliveries/s vs Redis pub/sub callbacks`,
              unit: 'records/s',
              hub: listenRate,
              peer: redisRate,
              maxRatio: 1.0,
              direction: 'higher',
              note: `${sizes}; each listener gets the records of a commit in one call; Redis: one subscriber connection, ${subscribers} 'message' callbacks, PUBLISH pipelined`,
              details: { subscribers, messages, lineBytes },
            }),
          ]),
      peerRow(redis, {
        id: 'live-fanout-vs-redis',
        name: `live fan-out to ${subscribers} subscribers (for await), deliveries/s vs Redis pub/sub callbacks`,
        unit: 'records/s',
        hub: hubRate,
        peer: redisRate,
        maxRatio: null,
        direction: 'higher',
        note: `${sizes}; an async iterator per subscriber, a promise per record`,
        details: { subscribers, messages, lineBytes },
      }),
    ];
  },
};

async function hubFanout(
  root: string,
  subscribers: number,
  deltas: number,
  how: 'iterate' | 'listen',
): Promise<{ rate: number; lineBytes: number }> {
  const hub = live.openConversationHub({ root, retention: false });
  try {
    const session = await hub.session(SESSION);
    const sent = await session.send({ requestId: 'r1', content: 'hi' });
    if (!sent.created) throw new Error('expected a new run');
    await session.flush();
    const start = session.durableSeq;
    const file = join(root, SESSION, 'events.jsonl');
    const sizeBefore = new LinesFollower(file);
    const before = sizeBefore.next();
    let received = 0;
    let target = Number.POSITIVE_INFINITY;
    let finished = 0;
    let allDone: () => void = () => undefined;
    const done = new Promise<void>((resolve) => {
      allDone = resolve;
    });
    const finish = () => {
      finished += 1;
      if (finished === subscribers) allDone();
    };
    let subs: { readonly cursor: number; close(): void }[];
    let loops: Promise<void>[];
    if (how === 'iterate') {
      const iterators = Array.from({ length: subscribers }, () => session.subscribe({ after: start }));
      subs = iterators;
      loops = iterators.map(async (subscription) => {
        for await (const event of subscription) {
          if (event.kind !== 'record') break;
          received += 1;
          if (event.record.seq >= target) break;
        }
        finish();
      });
    } else {
      const listenings = Array.from({ length: subscribers }, () => {
        const listening = session.listen({ after: start }, (events) => {
          received += events.length;
          if (listening.cursor >= target) listening.close();
        });
        return listening;
      });
      subs = listenings;
      loops = listenings.map((listening) => listening.done.then(finish));
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    gc();
    const begin = nowMs();
    for (let d = 0; d < deltas; d += 1) await sent.run.delta(`token ${String(d).padStart(6, '0')} `);
    await session.flush();
    target = session.durableSeq;
    // One that took the last record before the target was known waits for a next one: it is done.
    for (const subscription of subs) if (subscription.cursor >= target) subscription.close();
    await done;
    const seconds = (nowMs() - begin) / 1000;
    await Promise.all(loops);
    const lineBytes = Math.round((sizeBefore.next() - before) / deltas);
    sizeBefore.close();
    await sent.run.done();
    return { rate: received / seconds, lineBytes };
  } finally {
    await hub.close();
  }
}

async function redisFanout(peer: RedisPeer, subscribers: number, messages: number, lineBytes: number): Promise<number> {
  const subscriber = await peer.connect();
  await subscriber.subscribe('chat:s1');
  subscriber.setMaxListeners(0);
  let received = 0;
  let allDone: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    allDone = resolve;
  });
  const expected = subscribers * messages;
  for (let i = 0; i < subscribers; i += 1)
    subscriber.on('message', (_channel: string, _line: string) => {
      received += 1;
      if (received === expected) allDone();
    });
  const line = 'a'.repeat(lineBytes - 1);
  gc();
  const begin = nowMs();
  const pipeline = peer.client.pipeline();
  for (let m = 0; m < messages; m += 1) pipeline.publish('chat:s1', line);
  await pipeline.exec();
  await done;
  const seconds = (nowMs() - begin) / 1000;
  subscriber.removeAllListeners('message');
  await subscriber.unsubscribe('chat:s1');
  return received / seconds;
}
