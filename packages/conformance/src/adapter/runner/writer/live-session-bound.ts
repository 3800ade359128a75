import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { recordsOf } from './answers.js';
import { answerCode, type WriterContext, withAdapter } from './context.js';
import { inFreshStore, type Json, payloadOf } from './live-client.js';

// `writer/live-session-bound`: the bound on the sessions a live server holds open at once (TJ-LIVE-065).

/** The bound the check asks for, and the most it fills when the adapter states another (TJ-CONF-073). */
const ASKED_BOUND = 2;
const MOST_FILLED = 8;
/**
 * How long the check gives a `live_subscribe` it sent to reach its session before it counts on the subscriber (the
 * protocol has no answer before the subscription ends), and the longest that subscription waits for the record that
 * ends it (a hang guard: the check's acknowledgement writes it at once).
 */
const SUBSCRIBER_SETTLE_MS = 200;
const SUBSCRIBER_WAIT_MS = 3_000;

const sessionId = (i: number) => `b${i}`;
const logOf = (root: string, id: string) => join(root, id, 'events.jsonl');
const journalOf = (root: string) => (id: string) => join(root, '_turn_journal', `${id}.jsonl`);

/**
 * `writer/live-session-bound`: with the bound it states (the check asks for 2) filled by sessions that each have an
 * active run, an open is refused (`refused`) and creates nothing; once one run ended, the open closes that idle session
 * and succeeds, and the runs of the others go on. Then a session whose only activity is a waiting subscriber is
 * never closed for room either: the open is refused until the subscription ended. A session closed for room opens
 * again on its next use (TJ-LIVE-065, TJ-CONF-073).
 */
export async function sessionBoundCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/live-session-bound',
    'a live server holds at most its stated number of sessions open, closes an idle one for room, never a busy one',
    'writer',
    // TJ-CONF-041 too: an adapter that serves nothing while a subscription waits cannot show a subscriber's session busy.
    ['TJ-LIVE-065', 'TJ-CONF-073', 'TJ-CONF-041'],
    () =>
      inFreshStore(context, async (root) => {
        const failures: string[] = [];
        return withAdapter(context, async (process) => {
          const request = (op: string, id: string, params: Json = {}) =>
            process.request(op, { root, session_id: id, ...params });
          const ok = async (op: string, id: string, params: Json, what: string) => {
            const code = await answerCode(request(op, id, params));
            if (code !== 'ok') failures.push(`${what}: answered ${code}`);
            return code === 'ok';
          };
          // An error answer here fails the check with its message: the adapter must take the request (TJ-CONF-073).
          const first = await request('live_open', sessionId(0), { max_open_sessions: ASKED_BOUND });
          const bound = first.max_open_sessions;
          if (typeof bound !== 'number' || !Number.isInteger(bound) || bound < 1) {
            failures.push(
              `live_open answered max_open_sessions ${JSON.stringify(bound)}, not a bound ≥ 1 (TJ-CONF-073)`,
            );
            return failures;
          }
          if (bound > MOST_FILLED)
            return {
              skip: `not applicable: the adapter holds up to ${bound} sessions open (asked for ${ASKED_BOUND}), more than the ${MOST_FILLED} this check fills (TJ-CONF-073)`,
            };
          const busy = Array.from({ length: bound }, (_, i) => sessionId(i));
          for (const id of busy) {
            if (!(await ok('live_open', id, {}, `live_open ${id}`))) return failures;
            await ok('live_send', id, { request_id: `${id}-r1`, content: 'hi' }, `send ${id}-r1`);
            await ok('live_step', id, { request_id: `${id}-r1`, step: 'delta', text: 'Hel' }, `a delta of ${id}-r1`);
          }
          const extra = sessionId(bound);
          const refusedOpen = async (why: string) => {
            const code = await answerCode(request('live_open', extra, {}));
            if (code !== 'refused')
              failures.push(`live_open ${extra} with ${bound} sessions open, ${why}: answered ${code}, not refused`);
            if (existsSync(join(root, extra)) || existsSync(journalOf(root)(extra)))
              failures.push(`the refused live_open ${extra} (${why}) created its journals`);
          };
          await refusedOpen('each with an active run');
          // The last run ends: its session is idle and may be closed for room; the others' runs must go on.
          const idle = busy[bound - 1] as string;
          await ok('live_step', idle, { request_id: `${idle}-r1`, step: 'done' }, `done of ${idle}-r1`);
          await ok('live_open', extra, {}, `live_open ${extra} once ${idle} is idle`);
          // A finished run of `extra`, whose acknowledgement later ends the subscription that keeps `extra` busy.
          await ok('live_send', extra, { request_id: `${extra}-r1`, content: 'hi' }, `send ${extra}-r1`);
          await ok('live_step', extra, { request_id: `${extra}-r1`, step: 'done' }, `done of ${extra}-r1`);
          for (const id of busy.slice(0, -1)) {
            await ok(
              'live_step',
              id,
              { request_id: `${id}-r1`, step: 'delta', text: 'lo' },
              `a delta of ${id}-r1 after ${extra} opened`,
            );
            await ok(
              'live_step',
              id,
              { request_id: `${id}-r1`, step: 'done' },
              `done of ${id}-r1 after ${extra} opened`,
            );
            const ends = recordsOf(logOf(root, id), failures)
              .filter((r) => String(r.type).startsWith('chat.') && r.type !== 'chat.started' && r.type !== 'chat.delta')
              .map((r) => `${String(r.type)} ${String(payloadOf(r).reason ?? '')}`.trim());
            if (JSON.stringify(ends) !== JSON.stringify(['chat.done']))
              failures.push(
                `${id}-r1, streaming while ${extra} opened, ended ${JSON.stringify(ends)}, not ["chat.done"]: its session was closed for room`,
              );
          }
          // A subscriber alone keeps a session busy: every open session but `extra` gets a run, `extra` a subscriber.
          for (const id of busy.slice(0, -1))
            await ok('live_send', id, { request_id: `${id}-r2`, content: 'again' }, `send ${id}-r2`);
          const last = recordsOf(logOf(root, extra), failures).reduce(
            (most, r) => (typeof r.seq === 'number' ? Math.max(most, r.seq) : most),
            -1,
          );
          const subscription = answerCode(
            request('live_subscribe', extra, {
              after: last,
              until_seq: last + 1,
              timeout_ms: SUBSCRIBER_WAIT_MS * context.timeoutScale,
            }),
          );
          await new Promise((resolve) => setTimeout(resolve, SUBSCRIBER_SETTLE_MS * context.timeoutScale));
          const code = await answerCode(request('live_open', idle, {}));
          if (code !== 'refused')
            failures.push(
              `live_open ${idle} while the other open sessions had runs and ${extra} a subscriber: answered ${code}, not refused`,
            );
          await ok('live_ack', extra, { request_id: `${extra}-r1` }, `live_ack ${extra}-r1 (ending the subscription)`);
          const subscribed = await subscription;
          if (subscribed !== 'ok') failures.push(`the subscription of ${extra}: answered ${subscribed}`);
          // The subscription ended: `extra` is idle, closed for room, and opens again on its next use.
          await ok('live_open', idle, {}, `live_open ${idle} once ${extra}'s subscription ended`);
          for (const id of busy.slice(0, -1))
            await ok('live_step', id, { request_id: `${id}-r2`, step: 'done' }, `done of ${id}-r2`);
          await ok('live_snapshot', extra, {}, `live_snapshot ${extra} after it was closed for room`);
          return failures;
        });
      }),
  );
}
