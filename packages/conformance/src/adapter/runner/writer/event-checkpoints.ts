import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { observeEventLog } from '../../../fixtures/run-store-fixtures.js';
import { expectOk, expectRefused } from './answers.js';
import { type WriterContext, withAdapter } from './context.js';
import { journalAccess } from './journal-access.js';
import { eventLogOf, inFreshStore } from './lifecycle.js';
import { sameJson } from './same-json.js';

// The checks of an event-log writer's checkpoints (feature `lifecycle`, spec §6.2): what it writes into them
// (`writer/event-checkpoints`) and what it learns from them when it opens a log (`writer/event-run-index`).

type Json = Record<string, unknown>;
const FINISHING: Record<string, string> = { 'chat.done': 'done', 'chat.error': 'error', 'chat.cancelled': 'cancelled' };

/** Records appended one `event_append` at a time: runs that finish, fail and stay open, acks, an edit and an undo. */
function appendPlan(): { type: string; payload: Json }[] {
  const plan: { type: string; payload: Json }[] = [];
  const say = (n: number) =>
    plan.push({ type: 'message_append', payload: { message: { role: 'user', content: `m${n}` } } });
  plan.push({ type: 'chat.started', payload: { request_id: 'r1', content: 'hi' } });
  for (let n = 0; n < 8; n++) say(n);
  plan.push({ type: 'chat.done', payload: { request_id: 'r1' } });
  plan.push({ type: 'delivery.ack', payload: { request_id: 'r1', client_id: 'c1' } });
  plan.push({ type: 'delivery.ack', payload: { request_id: 'r1', client_id: 'c2' } });
  plan.push({ type: 'chat.started', payload: { request_id: 'r2' } });
  for (let n = 8; n < 16; n++) say(n);
  plan.push({ type: 'message_edit', payload: { index: 1, message: { role: 'user', content: 'edited' } } });
  plan.push({ type: 'undo', payload: { n: 2 } });
  plan.push({ type: 'chat.error', payload: { request_id: 'r2', error: { message: 'boom' } } });
  plan.push({ type: 'chat.started', payload: { request_id: 'r3' } });
  for (let n = 16; plan.length < 60; n++) say(n);
  return plan;
}

/** The run index (spec §6.2) that the records `before` a checkpoint give, each run's members in a fixed order. */
export function expectedRunIndex(before: readonly Json[]): Json[] {
  const runs = new Map<string, Json>();
  for (const record of before) {
    const payload = (record.payload ?? {}) as Json;
    const id = payload.request_id as string;
    if (record.type === 'chat.started' && !runs.has(id))
      runs.set(id, {
        request_id: id,
        started_seq: record.seq,
        started_ts: record.ts,
        outcome: null,
        finished_seq: null,
        finished_ts: null,
        acked: false,
        acked_by: [],
      });
    const run = runs.get(id);
    if (run === undefined) continue;
    const outcome = FINISHING[record.type as string];
    if (outcome !== undefined && run.outcome === null)
      Object.assign(run, { outcome, finished_seq: record.seq, finished_ts: record.ts });
    if (record.type === 'delivery.ack') {
      run.acked = true;
      const client = payload.client_id;
      if (typeof client === 'string' && !(run.acked_by as string[]).includes(client))
        (run.acked_by as string[]).push(client);
    }
  }
  return [...runs.values()];
}

/**
 * The failures of one checkpoint at `index` of `records`: its messages against the reference fold of every record
 * before it (TJ-EVENT-007), and its run index, when it has one, against the runs those records give (TJ-EVENT-019).
 */
async function checkpointFailures(records: readonly Json[], index: number, scratch: string): Promise<string[]> {
  const checkpoint = records[index] as Json;
  const payload = (checkpoint.payload ?? {}) as Json;
  const before = records.slice(0, index);
  const failures: string[] = [];
  writeFileSync(scratch, before.map((r) => `${JSON.stringify(r)}\n`).join(''));
  const observed = await observeEventLog(scratch);
  const fold = 'fold' in observed ? observed.fold : observed;
  if (!sameJson(payload.messages, fold.messages))
    failures.push(
      `the checkpoint at seq ${checkpoint.seq} holds messages ${JSON.stringify(payload.messages).slice(0, 300)}, not the fold of the records before it ${JSON.stringify(fold.messages).slice(0, 300)} (TJ-EVENT-007)`,
    );
  if (payload.runs !== undefined) {
    const expected = expectedRunIndex(before);
    if (!sameJson(payload.runs, expected))
      failures.push(
        `the checkpoint at seq ${checkpoint.seq} has runs ${JSON.stringify(payload.runs).slice(0, 400)}, not the runs of the records before it ${JSON.stringify(expected).slice(0, 400)} (TJ-EVENT-019)`,
      );
  }
  return failures;
}

/**
 * `writer/event-checkpoints`: every checkpoint the writer writes is the fold of what came before it, and none is split
 * over several lines (`checkpoint.part`), as none of these lists comes near a line-size limit (TJ-EVENT-029).
 */
async function checkpointsCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/event-checkpoints',
    "the checkpoints a writer appends hold the fold of the log before them, and their run index that log's runs",
    'writer',
    ['TJ-EVENT-007', 'TJ-EVENT-019', 'TJ-EVENT-029'],
    async () => {
      let written = 0;
      const outcome = await inFreshStore(context, 'event', eventLogOf, async (root, file) => {
        const failures: string[] = [];
        const records = await withAdapter(context, async (process) => {
          for (const [n, { type, payload }] of appendPlan().entries())
            await expectOk(process, 'event_append', { file, type, payload }, `append ${n} (${type})`, failures);
          return journalAccess(context, process).records(file, failures);
        });
        // The harness's own copy of each prefix, which the reference reader folds.
        const scratch = join(root, 'prefix', 'events.jsonl');
        mkdirSync(dirname(scratch), { recursive: true });
        const parts = records.filter((record) => record.type === 'checkpoint.part');
        if (parts.length > 0)
          failures.push(
            `the writer split a checkpoint of a list far below any line-size limit into ${parts.length} checkpoint.part records (first at seq ${parts[0]?.seq}; TJ-EVENT-029)`,
          );
        for (const [index, record] of records.entries())
          if (record.type === 'checkpoint') {
            written++;
            failures.push(...(await checkpointFailures(records, index, scratch)));
          }
        return failures;
      });
      // A writer need not checkpoint (TJ-EVENT-006 is a SHOULD): with none written there is nothing this check can see.
      if ('failures' in outcome && outcome.failures.length === 0 && written === 0)
        return { skip: 'the writer wrote no checkpoint in 60 appends (TJ-EVENT-006 is a SHOULD): nothing to compare' };
      return outcome;
    },
  );
}

const line = (seq: number, type: string, payload: Json) =>
  `${JSON.stringify({ seq, ts: '2026-06-19T03:14:07Z', type, payload })}\n`;

/**
 * `writer/event-run-index` (TJ-EVENT-020): a writer that opens a log learns its runs from the last checkpoint's run
 * index only together with the run records after it, and from every record when that checkpoint has no usable index.
 */
async function runIndexCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/event-run-index',
    "a writer opening a log applies the run records after a checkpoint's run index, and scans the whole log when the index is missing or malformed",
    'writer',
    ['TJ-EVENT-020', 'TJ-EVENT-009', 'TJ-EVENT-017'],
    () =>
      inFreshStore(context, 'event', eventLogOf, (root, file) =>
        withAdapter(context, async (process) => {
          const failures: string[] = [];
          const journal = journalAccess(context, process);
          const started = (requestId: string, target: string) => ({
            file: target,
            type: 'chat.started',
            payload: { request_id: requestId },
          });
          // r1 is running at the checkpoint and finished after it: a new run may start, r1 may not start again.
          await journal.plant(
            file,
            line(0, 'chat.started', { request_id: 'r1' }) +
              line(1, 'checkpoint', {
                messages: [],
                runs: [
                  {
                    request_id: 'r1',
                    started_seq: 0,
                    started_ts: '2026-06-19T03:14:07Z',
                    outcome: null,
                    finished_seq: null,
                    finished_ts: null,
                    acked: false,
                    acked_by: [],
                  },
                ],
              }) +
              line(2, 'chat.done', { request_id: 'r1' }),
          );
          await expectOk(
            process,
            'event_append',
            started('r2', file),
            'chat.started r2 after r1 finished past the checkpoint',
            failures,
          );
          await expectRefused(
            process,
            journal.source(file),
            'event_append',
            started('r1', file),
            'chat.started r1 again',
            failures,
          );
          // A checkpoint with no run index, then one whose index is malformed: r0 is known only from the records before.
          for (const [name, runs] of [
            ['no-index', undefined],
            ['bad-index', 'not a list'],
          ] as const) {
            const other = join(root, name, 'events.jsonl');
            mkdirSync(dirname(other), { recursive: true });
            await journal.plant(
              other,
              line(0, 'chat.started', { request_id: 'r0' }) +
                line(1, 'chat.done', { request_id: 'r0' }) +
                line(2, 'checkpoint', { messages: [], ...(runs === undefined ? {} : { runs }) }) +
                line(3, 'message_append', { message: { role: 'user', content: 'after' } }),
            );
            await expectRefused(
              process,
              journal.source(other),
              'event_append',
              started('r0', other),
              `chat.started r0 in a log whose checkpoint has ${runs === undefined ? 'no run index' : 'a malformed run index'}`,
              failures,
            );
          }
          return failures;
        }),
      ),
  );
}

/** The checkpoint checks of feature `lifecycle` (skipped without it or without family `event`). */
export async function eventCheckpointChecks(context: WriterContext): Promise<void> {
  await checkpointsCheck(context);
  await runIndexCheck(context);
}
