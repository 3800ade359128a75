import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { observeEventLog } from '../../../fixtures/run-store-fixtures.js';
import type { AdapterProcess } from '../../process.js';
import { freshDir } from '../fresh-dir.js';
import type { Outcome } from '../record.js';
import { bytesOf, expectOk, expectRefused, recordsOf } from './answers.js';
import { type WriterContext, withAdapter } from './context.js';
import { liveDurabilityCheck } from './live-durability.js';
import { liveInvalidSessionCheck } from './live-invalid-session.js';
import { claimsFeature } from './support.js';

// The checks of feature `live` (adapter.md §5.7): the implementation's own live sessions, seen through their answers
// and the files they write (spec §18).

const SESSION = 's1';
const turnJournalOf = (root: string) => join(root, '_turn_journal', `${SESSION}.jsonl`);
const eventLogOf = (root: string) => join(root, SESSION, 'events.jsonl');
type Json = Record<string, unknown>;

/** Runs one live check in a fresh store: skipped unless feature `live` and the turn and event families are claimed. */
async function inFreshStore(context: WriterContext, body: (root: string) => Promise<string[]>): Promise<Outcome> {
  if (!claimsFeature(context.claims, 'live')) return { skip: 'feature live not claimed' };
  for (const family of ['turn', 'event'] as const)
    if (!context.claims.families.includes(family)) return { skip: `family ${family} not claimed` };
  const root = freshDir('tj-conf-live-');
  try {
    return { failures: await body(root) };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** A client of one adapter's live session `s1` in `root`. */
function liveClient(process: AdapterProcess, root: string, failures: string[]) {
  const at = { root, session_id: SESSION };
  return {
    at,
    ok: (op: string, params: Json, what: string) => expectOk(process, op, { ...at, ...params }, what, failures),
    step: (requestId: string, step: string, params: Json = {}) =>
      expectOk(process, 'live_step', { ...at, request_id: requestId, step, ...params }, `live_step ${step}`, failures),
    refused: (file: string, op: string, params: Json, why: string) =>
      expectRefused(process, file, op, { ...at, ...params }, why, failures),
    seqs: async (after: number, extra: Json = {}) => {
      const answer = await expectOk(
        process,
        'live_subscribe',
        { ...at, after, ...extra },
        `subscribe after ${after}`,
        failures,
      );
      return (answer?.events ?? []) as Json[];
    },
  };
}

/** A run the worker streams: a segment, a tool call with its result, a second segment, `done`. */
async function streamRun(client: ReturnType<typeof liveClient>, requestId: string): Promise<void> {
  await client.step(requestId, 'delta', { text: 'Hel' });
  await client.step(requestId, 'delta', { text: 'lo' });
  await client.step(requestId, 'tool_start', { tool_call_id: 'c1', tool: 'search' });
  await client.step(requestId, 'tool_end', { tool_call_id: 'c1' });
  await client.step(requestId, 'tool_result', { tool_call_id: 'c1', output: 'found' });
  await client.step(requestId, 'delta', { text: ' world' });
  await client.step(requestId, 'done');
}

const isFinishing = (type: unknown) => type === 'chat.done' || type === 'chat.error' || type === 'chat.cancelled';
const messageOf = (record: Json) => ((record.payload as Json | undefined)?.message ?? {}) as Json;
const payloadOf = (record: Json) => (record.payload ?? {}) as Json;

/**
 * TJ-LIVE-004 on the records of an event log: every assistant segment is committed as one `message_append` (role
 * assistant, id its `message_id`, content its deltas) before the tool or finishing record that closes it, and every
 * `tool.result` as a `message_append` of role `tool` with its `tool_call_id` and output.
 */
function segmentProblems(records: readonly Json[]): string[] {
  const problems: string[] = [];
  let open: { id: string; text: string } | null = null;
  let committed = false;
  for (const record of records) {
    const type = record.type as string;
    const payload = payloadOf(record);
    if (type === 'assistant.segment.started') {
      open = { id: payload.message_id as string, text: '' };
      committed = false;
    } else if (type === 'chat.delta' && open !== null) open.text += String(payload.text ?? '');
    else if (type === 'message_append' && open !== null && messageOf(record).id === open.id) {
      const message = messageOf(record);
      if (message.role !== 'assistant' || message.content !== open.text)
        problems.push(`segment ${open.id} was committed as ${JSON.stringify(message).slice(0, 120)}`);
      if (committed) problems.push(`segment ${open.id} was committed twice`);
      committed = true;
    } else if ((type.startsWith('tool.') || isFinishing(type)) && open !== null) {
      if (!committed)
        problems.push(`segment ${open.id} (${JSON.stringify(open.text)}) was not committed before ${type}`);
      open = null;
    }
  }
  for (const result of records.filter((r) => r.type === 'tool.result')) {
    const callId = payloadOf(result).tool_call_id;
    const messages = records.filter((r) => r.type === 'message_append' && messageOf(r).tool_call_id === callId);
    const message = messages.length === 1 ? messageOf(messages[0] as Json) : undefined;
    if (message?.role !== 'tool' || message.content !== payloadOf(result).output)
      problems.push(
        `tool.result ${String(callId)} was committed as ${messages.length} message(s), not one tool message`,
      );
  }
  return problems;
}

/**
 * `writer/live-turn-flow`: a turn sent, streamed (two segments around a tool call) and finished. The turn's id is the run's
 * request id (TJ-LIVE-001); a retry writes nothing and answers the run's status (TJ-LIVE-002); a second send while a run
 * is active is refused (TJ-CONF-040); every segment and tool result is committed as a message (TJ-LIVE-004); the turn
 * ends `completed`.
 */
async function turnFlowCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/live-turn-flow',
    'a live turn: turn id = request id, idempotent send, segments and tool results committed as messages',
    'writer',
    ['TJ-LIVE-001', 'TJ-LIVE-002', 'TJ-LIVE-004', 'TJ-CONF-040'],
    () =>
      inFreshStore(context, async (root) => {
        const failures: string[] = [];
        const journal = turnJournalOf(root);
        const log = eventLogOf(root);
        await withAdapter(context, async (process) => {
          const client = liveClient(process, root, failures);
          const send = (requestId: string) =>
            client.ok('live_send', { request_id: requestId, content: 'hello' }, `send ${requestId}`);
          const first = await send('r1');
          if (first?.created !== true || first.status !== 'running')
            failures.push(`the first send answered ${JSON.stringify(first)}, not created/running`);
          const bothFiles = () => Buffer.concat([bytesOf(journal), Buffer.from('\u0000'), bytesOf(log)]);
          const before = bothFiles();
          const retry = await send('r1');
          if (retry?.created !== false || retry.status !== 'running')
            failures.push(
              `a retry while the run is active answered ${JSON.stringify(retry)}, not created false/running`,
            );
          if (!bothFiles().equals(before))
            failures.push('a retry of an active run wrote to the journals (TJ-LIVE-002)');
          await client.refused(log, 'live_send', { request_id: 'r2', content: 'other' }, 'a second send while r1 runs');
          await streamRun(client, 'r1');
          const afterRun = bothFiles();
          const late = await send('r1');
          if (late?.created !== false || late.status !== 'done')
            failures.push(`a retry of the finished run answered ${JSON.stringify(late)}, not created false/done`);
          if (!bothFiles().equals(afterRun))
            failures.push('a retry of a finished run wrote to the journals (TJ-LIVE-002)');
        });
        const turns = recordsOf(journal, failures);
        const events = recordsOf(log, failures);
        const submitted = turns.filter((r) => r.event === 'submitted');
        const started = events.filter((r) => r.type === 'chat.started');
        if (submitted.length !== 1 || started.length !== 1)
          failures.push(`${submitted.length} submitted and ${started.length} chat.started records, not one each`);
        else if (submitted[0]?.turn_id !== 'r1' || payloadOf(started[0] as Json).request_id !== 'r1')
          failures.push(
            `the turn id ${JSON.stringify(submitted[0]?.turn_id)} and the run's request id ${JSON.stringify(payloadOf(started[0] as Json).request_id)} are not both the request id r1 (TJ-LIVE-001)`,
          );
        const last = turns.filter((r) => r.turn_id === 'r1').at(-1);
        if (last?.event !== 'completed')
          failures.push(`the turn's last record is ${JSON.stringify(last?.event)}, not completed`);
        failures.push(...segmentProblems(events));
        const state = await observeEventLog(log);
        const messages = ('fold' in state ? state.fold : state).messages as Json[];
        const shape = messages.map((m) => `${String(m.role)}:${String(m.content)}`);
        const expected = ['user:hello', 'assistant:Hello', 'tool:found', 'assistant: world'];
        if (JSON.stringify(shape) !== JSON.stringify(expected))
          failures.push(`a reader derives the messages ${JSON.stringify(shape)}, not ${JSON.stringify(expected)}`);
        return failures;
      }),
  );
}

/** The seqs of `events` as the harness expects them listed: `{seq}` records and `{snapshot, last_seq}` events. */
const describe = (events: readonly Json[]) =>
  events.map((e) =>
    'seq' in e
      ? String(e.seq)
      : 'snapshot' in e
        ? `${String(e.snapshot)}@${String(e.last_seq)}`
        : `cut_off@${String(e.cut_off)}`,
  );

function expectEvents(events: readonly Json[], expected: readonly string[], what: string, failures: string[]): void {
  const got = describe(events);
  if (JSON.stringify(got) !== JSON.stringify(expected))
    failures.push(`${what}: the subscription yielded [${got.join(' ')}], not [${expected.join(' ')}]`);
}

const range = (from: number, through: number) =>
  Array.from({ length: Math.max(0, through - from + 1) }, (_, i) => String(from + i));

/** An event-log record as a writer would have written it. */
const eventLine = (seq: number, type: string, payload: Json, ts = '2026-06-19T03:14:07Z') =>
  JSON.stringify({ seq, ts, type, payload });

/** The records of one finished run `requestId` from `seq` on, with `ts`; seqs `seq`..`seq + 4`. */
function finishedRun(seq: number, requestId: string, ts: string): string[] {
  return [
    eventLine(seq, 'chat.started', { request_id: requestId, content: 'hi' }, ts),
    eventLine(
      seq + 1,
      'message_append',
      { message: { role: 'user', content: 'hi', id: `${requestId}.user`, request_id: requestId } },
      ts,
    ),
    eventLine(seq + 2, 'assistant.segment.started', { request_id: requestId, message_id: `${requestId}.a1` }, ts),
    eventLine(
      seq + 3,
      'message_append',
      { message: { role: 'assistant', content: 'ok', id: `${requestId}.a1`, request_id: requestId } },
      ts,
    ),
    eventLine(seq + 4, 'chat.done', { request_id: requestId }, ts),
  ];
}

/** Writes `lines` as `file`, with its directory. */
function writeLines(file: string, lines: readonly string[]): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${lines.join('\n')}\n`);
}

/**
 * `writer/live-subscribe`: a subscription yields every durable record after its cursor, once and in order (TJ-LIVE-009),
 * replayed and then live while a run appends; a cursor ahead of the log yields an `ahead` snapshot (TJ-LIVE-010); a
 * cursor whose next seq the log does not hold yields a `compacted` snapshot, never a later record (TJ-LIVE-018).
 */
async function subscribeCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/live-subscribe',
    'subscribe yields every durable record after the cursor once and in order, replayed then live; ahead and compacted snapshots',
    'writer',
    ['TJ-LIVE-009', 'TJ-LIVE-010', 'TJ-LIVE-018', 'TJ-CONF-041'],
    () =>
      inFreshStore(context, async (root) => {
        const failures: string[] = [];
        await withAdapter(context, async (process) => {
          const client = liveClient(process, root, failures);
          await client.ok('live_send', { request_id: 'r1', content: 'hello' }, 'send r1');
          await streamRun(client, 'r1');
          const last = ((await client.ok('live_snapshot', {}, 'snapshot'))?.last_seq ?? -1) as number;
          const onDisk = recordsOf(eventLogOf(root), failures).map((r) => r.seq as number);
          if (last !== onDisk.at(-1))
            failures.push(`the snapshot's last_seq ${last} is not the log's last seq ${onDisk.at(-1)}`);
          expectEvents(await client.seqs(-1), range(0, last), 'after -1', failures);
          expectEvents(await client.seqs(3), range(4, last), 'after 3', failures);
          expectEvents(await client.seqs(last), [], `after ${last} (the last seq)`, failures);
          expectEvents(await client.seqs(last + 5), [`ahead@${last}`], `after ${last + 5}`, failures);
          // Live: a subscription waiting from two records back while a second run appends (TJ-CONF-041).
          const waiting = client.seqs(last - 2, { until_seq: last + 3, timeout_ms: 10_000 });
          await client.ok('live_send', { request_id: 'r2', content: 'again' }, 'send r2');
          await client.step('r2', 'delta', { text: 'more' });
          await client.step('r2', 'done');
          expectEvents(
            await waiting,
            range(last - 1, last + 3),
            `after ${last - 2}, live through ${last + 3}`,
            failures,
          );
        });
        // A log missing seqs 5 and 6 (compacted away, or lost with the power between two unsynced appends).
        const gapRoot = join(root, 'gap');
        writeLines(eventLogOf(gapRoot), [
          ...finishedRun(0, 'g1', '2026-06-19T03:14:07Z'),
          ...finishedRun(7, 'g2', '2026-06-19T03:15:07Z'),
        ]);
        await withAdapter(context, async (process) => {
          const client = liveClient(process, gapRoot, failures);
          expectEvents(await client.seqs(4), ['compacted@11'], 'after 4 in a log without seq 5', failures);
          expectEvents(await client.seqs(8), range(9, 11), 'after 8 in the same log', failures);
        });
        return failures;
      }),
  );
}

/**
 * `writer/live-snapshot-ack`: a live snapshot reflects exactly the records through its `last_seq` (TJ-LIVE-013: compared with
 * a reader's fold of that prefix, mid-run and after it); an ack below the finishing record is refused (TJ-LIVE-014); an
 * acknowledged run leaves `undelivered` (and only a client's ack writes `delivery.ack`, TJ-EVENT-012), and a finished run older than the delivery window is not listed (TJ-LIVE-015).
 */
async function snapshotAckCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/live-snapshot-ack',
    'a live snapshot is the fold of the log through its last_seq; acks below the finish are refused; old runs expire',
    'writer',
    ['TJ-LIVE-013', 'TJ-LIVE-014', 'TJ-LIVE-015', 'TJ-CONF-043', 'TJ-EVENT-012'],
    () =>
      inFreshStore(context, async (root) => {
        const failures: string[] = [];
        const log = eventLogOf(root);
        const compare = async (snapshot: Json | null, what: string) => {
          if (snapshot === null) return;
          const through = snapshot.last_seq as number | null;
          const lines = bytesOf(log)
            .toString('utf8')
            .split('\n')
            .filter((l) => l.length > 0);
          const prefix = lines.filter((l) => through !== null && ((JSON.parse(l) as Json).seq as number) <= through);
          const prefixFile = join(root, 'prefix', 'events.jsonl');
          writeLines(prefixFile, prefix);
          const state = await observeEventLog(prefixFile);
          const fold = 'fold' in state ? state.fold : state;
          const mine = { messages: snapshot.messages, active: snapshot.active_request_id, overlay: snapshot.overlay };
          const theirs = { messages: fold.messages, active: fold.active_request_id, overlay: fold.overlay };
          if (JSON.stringify(mine) !== JSON.stringify(theirs))
            failures.push(
              `${what}: the snapshot ${JSON.stringify(mine).slice(0, 300)} is not the fold of the log through its last_seq ${through}: ${JSON.stringify(theirs).slice(0, 300)}`,
            );
        };
        await withAdapter(context, async (process) => {
          const client = liveClient(process, root, failures);
          await client.ok('live_send', { request_id: 'r1', content: 'hello' }, 'send r1');
          await client.step('r1', 'delta', { text: 'Hel' });
          await client.step('r1', 'delta', { text: 'lo' });
          await client.step('r1', 'tool_start', { tool_call_id: 'c1', tool: 'search' });
          await client.step('r1', 'delta', { text: 'partial' });
          await compare(await client.ok('live_snapshot', {}, 'snapshot mid-run'), 'mid-run');
          await client.step('r1', 'done');
          const after = await client.ok('live_snapshot', {}, 'snapshot after done');
          await compare(after, 'after done');
          if (JSON.stringify(after?.undelivered) !== '["r1"]')
            failures.push(`after done, undelivered is ${JSON.stringify(after?.undelivered)}, not ["r1"]`);
          // No client confirmed anything yet: the server has no receipt to record (TJ-EVENT-012).
          if (recordsOf(log, failures).some((r) => r.type === 'delivery.ack'))
            failures.push('a delivery.ack is in the log after done, before any client acknowledged r1 (TJ-EVENT-012)');
          const finish = recordsOf(log, failures).find((r) => isFinishing(r.type))?.seq as number;
          await client.refused(
            log,
            'live_ack',
            { request_id: 'r1', through_seq: finish - 1 },
            `an ack through ${finish - 1}, below the finishing record ${finish}`,
          );
          await client.ok(
            'live_ack',
            { request_id: 'r1', client_id: 'c1', through_seq: finish },
            'ack through the finish',
          );
          const acked = await client.ok('live_snapshot', { client_id: 'c1' }, 'snapshot for c1');
          if (JSON.stringify(acked?.undelivered) !== '[]')
            failures.push(`after c1's ack, undelivered for c1 is ${JSON.stringify(acked?.undelivered)}, not []`);
        });
        // A log with a run finished in 2020 and one finished a minute ago, neither acknowledged.
        const oldRoot = join(root, 'expiry');
        const recent = new Date(Date.now() - 60_000).toISOString();
        writeLines(eventLogOf(oldRoot), [
          ...finishedRun(0, 'old', '2020-01-01T00:00:00Z'),
          ...finishedRun(5, 'new', recent),
        ]);
        await withAdapter(context, async (process) => {
          const snapshot = await liveClient(process, oldRoot, failures).ok(
            'live_snapshot',
            {},
            'snapshot of the old log',
          );
          if (JSON.stringify(snapshot?.undelivered) !== '["new"]')
            failures.push(
              `a run finished in 2020 is past the 48 h delivery window: undelivered is ${JSON.stringify(snapshot?.undelivered)}, not ["new"]`,
            );
        });
        return failures;
      }),
  );
}

const turnLine = (event: string, turnId: string, extra: Json = {}) =>
  JSON.stringify({ version: 1, event, turn_id: turnId, created_at: 1_781_000_000, ...extra });

/**
 * The store a crash left: run `r2` finished but its turn still pending; run `r1` cut off mid-segment ("Roses are
 * red" streamed); turn `r3` submitted with nothing in the event log (the crash came before its run's records).
 */
function writeCrashedStore(root: string): void {
  const submitted = (id: string, content: string) =>
    turnLine('submitted', id, { session_id: SESSION, stream_id: id, role: 'user', content });
  writeLines(turnJournalOf(root), [
    submitted('r2', 'first'),
    turnLine('worker_started', 'r2', { session_id: SESSION, stream_id: 'r2' }),
    submitted('r1', 'write a poem'),
    turnLine('worker_started', 'r1', { session_id: SESSION, stream_id: 'r1' }),
    submitted('r3', 'are you there?'),
  ]);
  writeLines(eventLogOf(root), [
    ...finishedRun(0, 'r2', '2026-06-19T03:14:07Z'),
    eventLine(5, 'chat.started', { request_id: 'r1', content: 'write a poem' }),
    eventLine(6, 'message_append', {
      message: { role: 'user', content: 'write a poem', id: 'r1.user', request_id: 'r1' },
    }),
    eventLine(7, 'assistant.segment.started', { request_id: 'r1', message_id: 'r1.a1' }),
    eventLine(8, 'chat.delta', { request_id: 'r1', message_id: 'r1.a1', text: 'Roses are' }),
    eventLine(9, 'chat.delta', { request_id: 'r1', message_id: 'r1.a1', text: ' red' }),
  ]);
}

/** The records appended to `file` since it held `before` (checkpoints aside: a writer may add them any time). */
function appendedSince(file: string, before: Buffer, failures: string[], what: string): Json[] {
  const now = bytesOf(file);
  if (!now.subarray(0, before.length).equals(before)) {
    failures.push(`${what}: the lines the crash left were not kept byte for byte`);
    return [];
  }
  const added: Json[] = [];
  for (const line of now
    .subarray(before.length)
    .toString('utf8')
    .split('\n')
    .filter((l) => l.length > 0)) {
    try {
      added.push(JSON.parse(line) as Json);
    } catch {
      failures.push(`${what}: an appended line is not JSON: ${line.slice(0, 80)}`);
    }
  }
  return added.filter((r) => r.type !== 'checkpoint');
}

/**
 * `writer/live-restart`: opening a session a crash left closes what it abandoned (TJ-LIVE-016): the unfinished run with
 * `chat.cancelled` `server_startup_recovery`, after its open segment's text as a partial assistant message
 * (TJ-LIVE-017); the turn whose run finished `completed`, the others `interrupted`; the user message of the turn whose
 * run never started restored, without starting a run (TJ-LIVE-019). Opening it again changes nothing.
 */
async function restartCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/live-restart',
    'opening a crashed session closes its run and turns, keeps the partial segment, restores a lost user message',
    'writer',
    ['TJ-LIVE-016', 'TJ-LIVE-017', 'TJ-LIVE-019', 'TJ-CONF-040'],
    () =>
      inFreshStore(context, async (root) => {
        const failures: string[] = [];
        writeCrashedStore(root);
        const journal = turnJournalOf(root);
        const log = eventLogOf(root);
        const [journalBefore, logBefore] = [readFileSync(journal), readFileSync(log)];
        await withAdapter(context, (process) => liveClient(process, root, failures).ok('live_open', {}, 'live_open'));
        const events = appendedSince(log, logBefore, failures, 'the event log');
        const turns = appendedSince(journal, journalBefore, failures, 'the turn journal');
        const describeEvent = (r: Json) => {
          const p = payloadOf(r);
          if (r.type !== 'message_append')
            return `${String(r.type)} ${String(p.request_id)} ${String(p.reason ?? '')}`.trim();
          const m = messageOf(r);
          return `message ${String(m.role)} ${String(m.id)} ${JSON.stringify(m.content)}${m.partial === true ? ' partial' : ''} ${String(m.request_id)}`;
        };
        const got = events.map(describeEvent);
        const partial = 'message assistant r1.a1 "Roses are red" partial r1';
        const cancelled = 'chat.cancelled r1 server_startup_recovery';
        const restored = 'message user r3.user "are you there?" r3';
        for (const expected of [partial, cancelled, restored])
          if (got.filter((g) => g === expected).length !== 1)
            failures.push(`the event log did not get exactly one "${expected}"`);
        if (got.indexOf(partial) > got.indexOf(cancelled))
          failures.push('the partial message was appended after the run was cancelled (TJ-LIVE-017)');
        const extra = got.filter((g) => g !== partial && g !== cancelled && g !== restored);
        if (extra.length > 0)
          failures.push(`recovery appended other event records: ${JSON.stringify(extra).slice(0, 200)}`);
        const closing = turns
          .map((r) => `${String(r.turn_id)} ${String(r.event)} ${String(r.reason ?? '')}`.trim())
          .sort();
        const expectedTurns = [
          'r1 interrupted server_startup_recovery',
          'r2 completed',
          'r3 interrupted server_startup_recovery',
        ];
        if (JSON.stringify(closing) !== JSON.stringify(expectedTurns))
          failures.push(`the turn journal got ${JSON.stringify(closing)}, not ${JSON.stringify(expectedTurns)}`);
        const [journalAfter, logAfter] = [readFileSync(journal), readFileSync(log)];
        await withAdapter(context, (process) =>
          liveClient(process, root, failures).ok('live_open', {}, 'a second live_open'),
        );
        if (
          !readFileSync(journal).equals(journalAfter) ||
          appendedSince(log, logAfter, failures, 'the event log').length > 0
        )
          failures.push('opening the recovered session again wrote to it');
        return failures;
      }),
  );
}

/** Records of the long log of `writer/live-catch-up`, and the bytes of each one's message. */
const LONG_LOG_RECORDS = 6000;
const LONG_LOG_MESSAGE_BYTES = 1000;

/**
 * `writer/live-catch-up`: a session opened on a log the harness wrote — 6,000 records, 6 MB, more than an in-memory
 * window of recent records holds by default — serves a cursor near the log's start from the log itself: a subscription
 * after seq 99 yields every record from 100 to the last, once and in order, with no `compacted` snapshot, because the
 * log holds them all (TJ-LIVE-012). The cost half of the rule (following the records after the cursor, not the log's
 * length) is measured by `pnpm bench`, not here.
 */
async function catchUpCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/live-catch-up',
    'a cursor older than any in-memory window is served from the log: every record after it, no snapshot',
    'writer',
    ['TJ-LIVE-012', 'TJ-CONF-041'],
    () =>
      inFreshStore(context, async (root) => {
        const failures: string[] = [];
        const content = 'x'.repeat(LONG_LOG_MESSAGE_BYTES);
        const lines = Array.from(
          { length: LONG_LOG_RECORDS },
          (_, seq) =>
            `{"seq":${seq},"ts":"2026-06-19T03:14:07Z","type":"message_append","payload":{"message":{"role":"user","content":"${content}"}}}\n`,
        );
        mkdirSync(dirname(eventLogOf(root)), { recursive: true });
        writeFileSync(eventLogOf(root), lines.join(''));
        const last = LONG_LOG_RECORDS - 1;
        await withAdapter(context, async (process) => {
          const client = liveClient(process, root, failures);
          const events = await client.seqs(99, { until_seq: last, timeout_ms: 30_000 });
          const snapshots = events.filter((e) => e.seq === undefined);
          if (snapshots.length > 0)
            failures.push(
              `a subscription after seq 99 yielded ${JSON.stringify(snapshots.slice(0, 3))}, though the log holds every record after it (TJ-LIVE-012)`,
            );
          const seqs = events.flatMap((e) => (typeof e.seq === 'number' ? [e.seq] : []));
          const wrong = seqs.findIndex((seq, i) => seq !== 100 + i);
          if (wrong >= 0 || seqs.length !== last - 99)
            failures.push(
              `a subscription after seq 99 yielded ${seqs.length} record(s)${wrong >= 0 ? `, seq ${seqs[wrong]} where ${100 + wrong} belongs` : ''}, not seqs 100..${last} in order`,
            );
        });
        return failures;
      }),
  );
}

/** The checks of feature `live` (adapter.md §5.7). */
export async function liveChecks(context: WriterContext): Promise<void> {
  await turnFlowCheck(context);
  await subscribeCheck(context);
  await catchUpCheck(context);
  await snapshotAckCheck(context);
  await restartCheck(context);
  await liveDurabilityCheck(context);
  await liveInvalidSessionCheck(context);
}
