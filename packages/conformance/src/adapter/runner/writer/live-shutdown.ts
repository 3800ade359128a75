import { bytesOf, recordsOf } from './answers.js';
import { answerCode, type WriterContext, withAdapter } from './context.js';
import { eventLogOf, inFreshStore, type Json, liveClient, messageOf, payloadOf, turnJournalOf } from './live-client.js';
import { appendedSince } from './live-restart.js';

// `writer/live-shutdown`: what a clean shutdown leaves of a run that was streaming (spec §18.5, TJ-LIVE-036).

const SHUTDOWN = 'server_shutdown';
const RECOVERY = 'server_startup_recovery';

/** Where a record of `records` names the crash reason `server_startup_recovery`, described; empty when none does. */
const recoveryMarks = (records: readonly Json[]): string[] =>
  records
    .filter((r) => payloadOf(r).reason === RECOVERY || r.reason === RECOVERY)
    .map((r) => `${String(r.type ?? r.event)} ${String(payloadOf(r).request_id ?? r.turn_id)}`);

/**
 * `writer/live-shutdown`: `stop` while run `r1` streams is a clean shutdown (TJ-CONF-072): the server ends the run
 * itself — `chat.cancelled` with reason `server_shutdown`, its turn `interrupted` with it — and the next open finds
 * nothing to recover, so no record anywhere says `server_startup_recovery` (TJ-LIVE-036).
 */
export async function shutdownCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/live-shutdown',
    'a clean stop ends a streaming run as server_shutdown and leaves nothing for the next start to recover',
    'writer',
    ['TJ-LIVE-036', 'TJ-CONF-072'],
    () =>
      inFreshStore(context, async (root) => {
        const failures: string[] = [];
        const [journal, log] = [turnJournalOf(root), eventLogOf(root)];
        await withAdapter(context, async (process) => {
          const client = liveClient(process, root, failures);
          await client.ok('live_open', {}, 'live_open');
          await client.ok('live_send', { request_id: 'r1', content: 'hello' }, 'send r1');
          await client.step('r1', 'delta', { text: 'Hel' });
          await client.step('r1', 'delta', { text: 'lo' });
          const answered = await answerCode(process.stop());
          if (answered !== 'ok') failures.push(`stop while r1 streamed: answered ${answered}`);
        });
        const cancelled = recordsOf(log, failures).filter(
          (r) => r.type === 'chat.cancelled' && payloadOf(r).request_id === 'r1',
        );
        const reasons = JSON.stringify(cancelled.map((r) => payloadOf(r).reason ?? null));
        if (reasons !== JSON.stringify([SHUTDOWN]))
          failures.push(
            `after a clean stop while r1 streamed, the log holds r1's chat.cancelled with reasons ${reasons}, not one with "${SHUTDOWN}"`,
          );
        const closed = recordsOf(journal, failures)
          .filter((r) => r.turn_id === 'r1' && (r.event === 'interrupted' || r.event === 'completed'))
          .map((r) => `${String(r.event)} ${String(r.reason ?? '')}`.trim());
        if (JSON.stringify(closed) !== JSON.stringify([`interrupted ${SHUTDOWN}`]))
          failures.push(
            `after a clean stop while r1 streamed, its turn ended ${JSON.stringify(closed)}, not ["interrupted ${SHUTDOWN}"]`,
          );
        const partial = recordsOf(log, failures).filter(
          (r) => r.type === 'message_append' && messageOf(r).request_id === 'r1' && messageOf(r).role === 'assistant',
        );
        const committed = JSON.stringify(partial.map((r) => [messageOf(r).content, messageOf(r).partial === true]));
        if (committed !== JSON.stringify([['Hello', true]]))
          failures.push(
            `at the clean stop r1's open segment "Hello" was not committed as its one assistant message, marked partial: [content, partial] ${committed}`,
          );
        const [journalBefore, logBefore] = [bytesOf(journal), bytesOf(log)];
        await withAdapter(context, (process) =>
          liveClient(process, root, failures).ok('live_open', {}, 'live_open after the clean stop'),
        );
        const recovered = [
          ...appendedSince(log, logBefore, failures, 'the event log'),
          ...appendedSince(journal, journalBefore, failures, 'the turn journal'),
        ];
        if (recovered.length > 0)
          failures.push(
            `opening the session after a clean stop appended ${JSON.stringify(recovered.map((r) => r.type ?? r.event))}: the stop left a run for recovery`,
          );
        const marks = recoveryMarks([...recordsOf(log, failures), ...recordsOf(journal, failures)]);
        if (marks.length > 0)
          failures.push(`after a clean stop the store holds ${RECOVERY} (a crash's reason): ${marks.join(', ')}`);
        return failures;
      }),
  );
}
