import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { straceAvailable, straceWrapper } from '../../strace.js';
import { freshDir } from '../fresh-dir.js';
import { spawnAdapter, started, type WriterContext } from './context.js';
import { claimsFeature, STRACE_MISSING } from './support.js';
import { answerAt, syncedBetween, type TraceStep, traceSteps, writeWith } from './trace-steps.js';

// `writer/live-durable` (feature `live`, strace): which records a live session syncs, and in which order it writes
// the two families, seen in a trace of the adapter's syscalls (spec §18.1, §18.2).

const SESSION = 's1';
/** Deltas in one burst: a session that syncs each of them on its own does this many syncs of the log. */
const BURST = 40;

/** A request whose answer the check looks at: its id and what it was. */
interface Answered {
  readonly id: number;
  readonly what: string;
}

/**
 * TJ-LIVE-006 / TJ-CONF-042: each answer in `durable` comes after a sync of `path` that follows the last write to it
 * before the answer.
 */
function unsyncedAnswers(steps: readonly TraceStep[], path: string, durable: readonly Answered[]): string[] {
  const problems: string[] = [];
  for (const { id, what } of durable) {
    const answered = answerAt(steps, id);
    if (answered === undefined) {
      problems.push(`the answer to ${what} (id ${id}) is not in the trace`);
      continue;
    }
    const lastWrite = steps.filter((s) => s.kind === 'write' && s.path === path && s.at < answered).pop();
    if (lastWrite === undefined) continue;
    if (!syncedBetween(steps, path, lastWrite.at, answered))
      problems.push(
        `${what} was answered before the event log was synced after its last write (TJ-LIVE-006, TJ-CONF-042): ${(lastWrite.data ?? '').slice(0, 160)}`,
      );
  }
  return problems;
}

/**
 * TJ-LIVE-008: the subscription answered as request `id` yielded `seqs`; each of them must have been synced — a sync of
 * the log after the write that holds the record — before the answer. A record not yet written when the answer went
 * out was not delivered from the log either, and is a failure too.
 */
function undurableDeliveries(steps: readonly TraceStep[], path: string, id: number, seqs: readonly number[]): string[] {
  const answered = answerAt(steps, id);
  if (answered === undefined) return [`the answer to live_subscribe (id ${id}) is not in the trace`];
  if (seqs.length === 0) return ['the subscription yielded no record of the burst within 10 s'];
  for (const seq of seqs) {
    const write = writeWith(steps, path, `{"seq":${seq},`);
    if (write === undefined || write.at > answered)
      return [`a subscriber received seq ${seq} before any write of it to the event log (TJ-LIVE-008)`];
    if (!syncedBetween(steps, path, write.at, answered))
      return [`a subscriber received seq ${seq} before the event log was synced after its write (TJ-LIVE-008)`];
  }
  return [];
}

/**
 * `writer/live-durable` (strace): a turn streamed through `live_*` requests under strace. Every answer to a send, a
 * tool step, a system message (TJ-LIVE-062), `done` and an ack follows a sync of the event log (TJ-LIVE-006,
 * TJ-CONF-042); a subscriber waiting for
 * the deltas receives none before it is synced (TJ-LIVE-008); a burst of deltas is not
 * synced delta by delta (TJ-LIVE-007); `submitted` is durable before `chat.started` is written (TJ-LIVE-003); and
 * `chat.done` is written before the turn's `completed` (TJ-LIVE-005).
 */
export async function liveDurabilityCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/live-durable',
    'live sessions sync messages, tool records, system messages, run ends and acks before answering, deliver only synced records, batch deltas, and order the two families (strace)',
    'writer',
    ['TJ-LIVE-003', 'TJ-LIVE-005', 'TJ-LIVE-006', 'TJ-LIVE-007', 'TJ-LIVE-008', 'TJ-LIVE-062', 'TJ-CONF-042'],
    async () => {
      if (!claimsFeature(context.claims, 'live')) return { skip: 'feature live not claimed' };
      for (const family of ['turn', 'event'] as const)
        if (!context.claims.families.includes(family)) return { skip: `family ${family} not claimed` };
      if (context.strace === 'never') return { skip: 'disabled: live durability not proven', unproven: true };
      if (!straceAvailable()) return { skip: STRACE_MISSING, unproven: true };
      const root = freshDir('tj-conf-live-strace-');
      const traceFile = join(root, 'trace.txt');
      const journal = join(root, '_turn_journal', `${SESSION}.jsonl`);
      const log = join(root, SESSION, 'events.jsonl');
      const process = spawnAdapter(context, straceWrapper(traceFile));
      try {
        await started(process);
        const at = { root, session_id: SESSION, request_id: 'r1' };
        const durable: Answered[] = [];
        const ask = async (op: string, params: Record<string, unknown>, what: string) => ({
          id: (await process.requestWithId(op, { ...at, ...params })).id,
          what,
        });
        durable.push(await ask('live_send', { content: 'hello' }, 'live_send'));
        // TJ-LIVE-008: a subscriber waiting for the burst's records, from the log's last seq before it.
        const sent = (await process.request('live_snapshot', { root, session_id: SESSION })) as { last_seq: number };
        const untilSeq = sent.last_seq + BURST + 1;
        const subscription = process.request('live_subscribe', {
          root,
          session_id: SESSION,
          after: sent.last_seq,
          until_seq: untilSeq,
          timeout_ms: 10_000,
        }) as Promise<{ events: { seq?: number }[] }>;
        const subscriptionId = process.lastRequestId;
        // A burst of deltas, pipelined as a fast model streams them. A session that syncs each one does BURST syncs; one
        // that batches them (TJ-LIVE-007) does a few, however loaded the machine: its bounded delay would have to
        // pass between nearly every two requests of the burst to come close.
        const burst = Array.from({ length: BURST }, (_, i) =>
          process.request('live_step', { ...at, step: 'delta', text: `t${i} ` }),
        );
        const firstDeltaId = process.lastRequestId - BURST + 1;
        await Promise.all(burst);
        durable.push(await ask('live_step', { step: 'tool_start', tool_call_id: 'c1', tool: 'search' }, 'tool_start'));
        durable.push(
          await ask('live_step', { step: 'tool_result', tool_call_id: 'c1', output: 'found' }, 'tool_result'),
        );
        durable.push(await ask('live_step', { step: 'system', text: 'the search is done' }, 'system'));
        await ask('live_step', { step: 'delta', text: 'done.' }, 'delta');
        const done = await ask('live_step', { step: 'done' }, 'done');
        durable.push(done);
        const yielded = (await subscription).events.flatMap((e) => (typeof e.seq === 'number' ? [e.seq] : []));
        const logText = readFileSync(log, 'utf8');
        const finish = /"seq":(\d+),[^\n]*"type":"chat\.done"/.exec(logText)?.[1];
        durable.push(await ask('live_ack', { through_seq: Number(finish ?? 0) }, 'live_ack'));
        await process.stop();
        const steps = traceSteps(readFileSync(traceFile, 'utf8'));
        const failures = unsyncedAnswers(steps, log, durable);
        failures.push(...undurableDeliveries(steps, log, subscriptionId, yielded));
        // TJ-LIVE-007: between the first delta's answer and the tool_start request, count the syncs of the log.
        const burstStart = answerAt(steps, firstDeltaId) ?? 0;
        const burstEnd = answerAt(steps, durable[1]?.id ?? 0) ?? 0;
        const burstSyncs = steps.filter(
          (s) => s.kind === 'sync' && s.path === log && s.at > burstStart && s.at < burstEnd,
        ).length;
        if (burstSyncs >= (BURST * 3) / 4)
          failures.push(
            `${BURST} deltas streamed in one burst took ${burstSyncs} syncs of the event log (TJ-LIVE-007)`,
          );
        // TJ-LIVE-003: submitted written and synced before chat.started is written.
        const submitted = writeWith(steps, journal, '"event":"submitted"');
        const chatStarted = writeWith(steps, log, '"type":"chat.started"');
        if (submitted === undefined || chatStarted === undefined)
          failures.push('the writes of submitted and chat.started are not both in the trace');
        else if (!syncedBetween(steps, journal, submitted.at, chatStarted.at))
          failures.push('chat.started was written before submitted was synced (TJ-LIVE-003)');
        // TJ-LIVE-005: chat.done written before completed.
        const chatDone = writeWith(steps, log, '"type":"chat.done"');
        const completed = writeWith(steps, journal, '"event":"completed"');
        if (chatDone === undefined || completed === undefined)
          failures.push('the writes of chat.done and completed are not both in the trace');
        else if (completed.at < chatDone.at)
          failures.push("the turn's completed was written before the run's chat.done (TJ-LIVE-005)");
        return { failures };
      } finally {
        await process.dispose();
        rmSync(root, { recursive: true, force: true });
      }
    },
  );
}
