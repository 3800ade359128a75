import { recordsOf } from './answers.js';
import { type WriterContext, withAdapter } from './context.js';
import { eventLogOf, inFreshStore, liveClient } from './live-client.js';

// `writer/live-ack-receipts`: what an acknowledgement may write (spec §18.4): no receipt the log already implies, and
// no client id past the bound the session states.

/**
 * `writer/live-ack-receipts`: repeated acknowledgements — the same client's again, several sent at once, one naming no
 * client after a client's — write no second `delivery.ack` (TJ-LIVE-056); a client id that is empty or a character
 * past the bound `live_open` states is refused and writes nothing, one at the bound is recorded (TJ-LIVE-057,
 * TJ-CONF-070).
 */
export async function ackReceiptsCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/live-ack-receipts',
    'an acknowledgement the log already implies writes nothing; a client id out of the stated bound is refused',
    'writer',
    ['TJ-LIVE-056', 'TJ-LIVE-057', 'TJ-CONF-070'],
    () =>
      inFreshStore(context, async (root) => {
        const failures: string[] = [];
        const log = eventLogOf(root);
        const acks = () => recordsOf(log, failures).filter((r) => r.type === 'delivery.ack');
        const expectAcks = (count: number, what: string) => {
          const found = acks().length;
          if (found !== count)
            failures.push(`${what}: the log holds ${found} delivery.ack record(s), not ${count} (TJ-LIVE-056)`);
        };
        await withAdapter(context, async (process) => {
          const client = liveClient(process, root, failures);
          const opened = await client.ok('live_open', {}, 'live_open');
          const bound = opened?.client_id_max;
          const finishRun = async (requestId: string) => {
            await client.ok('live_send', { request_id: requestId, content: 'hello' }, `send ${requestId}`);
            await client.step(requestId, 'delta', { text: 'hi' });
            await client.step(requestId, 'done');
          };
          await finishRun('r1');
          await client.ok('live_ack', { request_id: 'r1', client_id: 'c1' }, "c1's ack of r1");
          expectAcks(1, "after c1's ack of r1");
          await client.ok('live_ack', { request_id: 'r1', client_id: 'c1' }, "c1's ack of r1 again");
          expectAcks(1, 'after c1 acknowledged r1 a second time');
          await client.ok('live_ack', { request_id: 'r1' }, 'an ack of r1 naming no client');
          expectAcks(1, 'after an ack of r1 naming no client, which c1 acknowledged');
          // Repeats racing an acknowledgement still being written: sent together, none waits for another's answer.
          await finishRun('r2');
          const racing = Array.from({ length: 3 }, (_, i) =>
            client.ok('live_ack', { request_id: 'r2', client_id: 'c2' }, `c2's ack of r2 #${i + 1} of 3 sent at once`),
          );
          await Promise.all(racing);
          expectAcks(2, 'after three acks of r2 by c2 sent at once');
          await finishRun('r3');
          await Promise.all(
            Array.from({ length: 3 }, (_, i) =>
              client.ok('live_ack', { request_id: 'r3' }, `an ack of r3 naming no client #${i + 1} of 3 sent at once`),
            ),
          );
          expectAcks(3, 'after three acks of r3 naming no client sent at once');
          if (typeof bound !== 'number' || !Number.isSafeInteger(bound) || bound < 1) {
            failures.push(
              `live_open states no client_id_max (${JSON.stringify(bound)}): the bound of a client id must be stated (TJ-CONF-070, TJ-LIVE-057)`,
            );
            return;
          }
          // The session's `invalid_request` is a request the adapter cannot take: `bad_request` (TJ-CONF-070).
          await client.refused(
            log,
            'live_ack',
            { request_id: 'r3', client_id: '' },
            'an ack with an empty client id',
            'bad_request',
          );
          await client.refused(
            log,
            'live_ack',
            { request_id: 'r3', client_id: 'x'.repeat(bound + 1) },
            `an ack with a client id of ${bound + 1} characters, past the stated bound ${bound}`,
            'bad_request',
          );
          const atBound = 'y'.repeat(bound);
          await client.ok(
            'live_ack',
            { request_id: 'r3', client_id: atBound },
            `an ack with a client id of ${bound} characters, the stated bound`,
          );
          if (!acks().some((r) => (r.payload as Record<string, unknown> | undefined)?.client_id === atBound))
            failures.push(
              `an ack with a client id of ${bound} characters, the stated bound, wrote no delivery.ack naming it`,
            );
        });
        return failures;
      }),
  );
}
