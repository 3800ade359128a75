import { recordsOf } from './answers.js';
import { type WriterContext, withAdapter } from './context.js';
import { eventLogOf, inFreshStore, type Json, liveClient, messageOf } from './live-client.js';

// `writer/live-system-message`: a system message the worker inserts into a run (spec §18.2, TJ-LIVE-062).

/**
 * `writer/live-system-message`: a system message between two deltas is committed as a `message_append` of role
 * `system` with the run's `request_id` and an id no other message of the run has, after the open segment's message, and
 * the next delta opens a new segment; a second one gets its own id, one after `done` is refused (TJ-LIVE-062).
 */
export async function systemMessageCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/live-system-message',
    "a run's system message is a boundary committed as a system message of the run, with an id of its own",
    'writer',
    ['TJ-LIVE-062'],
    () =>
      inFreshStore(context, async (root) => {
        const failures: string[] = [];
        const log = eventLogOf(root);
        await withAdapter(context, async (process) => {
          const client = liveClient(process, root, failures);
          await client.ok('live_send', { request_id: 'r1', content: 'hello' }, 'send r1');
          await client.step('r1', 'delta', { text: 'Hel' });
          await client.step('r1', 'system', { text: 'budget low' });
          await client.step('r1', 'delta', { text: 'lo' });
          await client.step('r1', 'system', { text: 'budget gone' });
          await client.step('r1', 'done');
          await client.refused(
            log,
            'live_step',
            { request_id: 'r1', step: 'system', text: 'late' },
            'a system message of r1 after its done',
          );
        });
        const records = recordsOf(log, failures);
        const appends = records.filter((r) => r.type === 'message_append' && messageOf(r).request_id === 'r1');
        const messages = appends.map(messageOf);
        const systems = messages.filter((m) => m.role === 'system');
        const shown = (list: readonly Json[]) => JSON.stringify(list.map((m) => [m.role, m.content, m.id]));
        if (JSON.stringify(systems.map((m) => m.content)) !== '["budget low","budget gone"]') {
          failures.push(
            `r1's system messages are ${shown(systems)}, not "budget low" then "budget gone" (role system, request_id r1)`,
          );
          return failures;
        }
        const ids = messages.map((m) => m.id);
        for (const system of systems)
          if (typeof system.id !== 'string' || ids.filter((id) => id === system.id).length !== 1)
            failures.push(
              `the system message ${JSON.stringify(system.content)} has no id of its own in r1: ${shown(messages)}`,
            );
        // The open segment is committed before the system message, and the next text is a segment of its own.
        const order = messages.map((m) => `${String(m.role)}:${String(m.content)}`);
        const expected = ['user:hello', 'assistant:Hel', 'system:budget low', 'assistant:lo', 'system:budget gone'];
        if (JSON.stringify(order) !== JSON.stringify(expected))
          failures.push(`r1's messages are ${JSON.stringify(order)}, not ${JSON.stringify(expected)}`);
        const assistantIds = messages.filter((m) => m.role === 'assistant').map((m) => m.id);
        if (new Set(assistantIds).size !== assistantIds.length)
          failures.push(
            `r1's assistant messages share an id (${JSON.stringify(assistantIds)}): the text after a system message opens a new segment`,
          );
        return failures;
      }),
  );
}
