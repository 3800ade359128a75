import { bytesOf, recordsOf } from './answers.js';
import { type WriterContext, withAdapter } from './context.js';
import { eventLogOf, inFreshStore, liveClient, messageOf, payloadOf, turnJournalOf } from './live-client.js';

// `writer/live-cancel`: the host cancels the active run (spec §18.1, TJ-LIVE-035).

/**
 * `writer/live-cancel`: a run cancelled mid-segment with a reason commits the open segment as a partial assistant
 * message, then `chat.cancelled` with that reason, and interrupts its turn with it; the run's later steps and a second
 * cancellation are refused and write nothing, as is the cancellation of a run the session does not hold (TJ-LIVE-035).
 */
export async function cancelCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/live-cancel',
    "a cancelled run's open segment is committed partial, then chat.cancelled and the turn's interrupted carry the reason",
    'writer',
    ['TJ-LIVE-035'],
    () =>
      inFreshStore(context, async (root) => {
        const failures: string[] = [];
        const log = eventLogOf(root);
        const journal = turnJournalOf(root);
        await withAdapter(context, async (process) => {
          const client = liveClient(process, root, failures);
          await client.ok('live_send', { request_id: 'r1', content: 'hello' }, 'send r1');
          await client.step('r1', 'delta', { text: 'Hel' });
          await client.step('r1', 'cancel', { reason: 'user_stop' });
          const both = () => Buffer.concat([bytesOf(journal), Buffer.from('\u0000'), bytesOf(log)]);
          const after = both();
          await client.refused(
            log,
            'live_step',
            { request_id: 'r1', step: 'delta', text: 'lo' },
            'a delta of r1 after its cancellation',
          );
          await client.refused(
            log,
            'live_step',
            { request_id: 'r1', step: 'cancel', reason: 'again' },
            'a second cancellation of r1',
          );
          await client.refused(
            log,
            'live_step',
            { request_id: 'r9', step: 'cancel', reason: 'user_stop' },
            'a cancellation of r9, which the session does not hold',
          );
          if (!both().equals(after)) failures.push('the refused calls after the cancellation changed the turn journal');
        });
        const records = recordsOf(log, failures).filter(
          (r) => payloadOf(r).request_id === 'r1' || messageOf(r).request_id === 'r1',
        );
        const cancelled = records.findIndex((r) => r.type === 'chat.cancelled');
        const segment = records.findIndex((r) => r.type === 'message_append' && messageOf(r).role === 'assistant');
        const message = segment < 0 ? undefined : messageOf(records[segment] ?? {});
        if (cancelled < 0) failures.push('r1 has no chat.cancelled');
        else if (payloadOf(records[cancelled] ?? {}).reason !== 'user_stop')
          failures.push(
            `r1's chat.cancelled carries reason ${JSON.stringify(payloadOf(records[cancelled] ?? {}).reason)}, not "user_stop"`,
          );
        if (message === undefined || segment > cancelled)
          failures.push('the open segment\'s text "Hel" is not committed as a message before chat.cancelled');
        else if (message.content !== 'Hel' || message.partial !== true)
          failures.push(`the open segment was committed as ${JSON.stringify(message)}, not "Hel" marked partial`);
        const last = recordsOf(journal, failures)
          .filter((r) => r.turn_id === 'r1')
          .at(-1);
        if (last?.event !== 'interrupted' || last.reason !== 'user_stop')
          failures.push(`the turn's last record is ${JSON.stringify(last)}, not interrupted with reason "user_stop"`);
        return failures;
      }),
  );
}
