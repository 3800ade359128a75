import { recordsOf } from './answers.js';
import { type WriterContext, withAdapter } from './context.js';
import { eventLogOf, inFreshStore, type Json, liveClient, payloadOf } from './live-client.js';

// `writer/live-snapshot-tools`: the active run's tool calls in a live snapshot (spec §18.4, TJ-LIVE-063).

/** `value` as JSON with every object's members sorted: a call's members may come in any order. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, member: unknown) =>
    member !== null && typeof member === 'object' && !Array.isArray(member)
      ? Object.fromEntries(Object.entries(member).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : member,
  );

/**
 * `writer/live-snapshot-tools`: a snapshot taken while a run's tools run lists each call whose `tool.start` the log
 * holds through its `last_seq`, in start order, with its id, tool, arguments, the `ts` of its start and of its end
 * (null while running) and the end's `is_error` — as the records say (TJ-LIVE-063).
 */
export async function snapshotToolsCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/live-snapshot-tools',
    "a live snapshot lists the active run's tool calls as its records hold them, running and ended",
    'writer',
    ['TJ-LIVE-063'],
    () =>
      inFreshStore(context, async (root) => {
        const failures: string[] = [];
        const log = eventLogOf(root);
        /** The calls the records through `through` hold for `requestId`, in the answer's shape. */
        const expected = (requestId: string, through: number | null) => {
          const calls = new Map<string, Json>();
          for (const record of recordsOf(log, failures)) {
            const payload = payloadOf(record);
            if (through === null || (record.seq as number) > through || payload.request_id !== requestId) continue;
            const id = payload.tool_call_id as string;
            if (record.type === 'tool.start')
              calls.set(id, {
                tool_call_id: id,
                tool: payload.tool,
                ...(payload.args === undefined ? {} : { args: payload.args }),
                started_ts: record.ts,
                ended_ts: null,
              });
            else if (record.type === 'tool.end' && calls.has(id))
              calls.set(id, {
                ...calls.get(id),
                ended_ts: record.ts,
                ...(payload.is_error === undefined ? {} : { is_error: payload.is_error }),
              });
          }
          return [...calls.values()];
        };
        await withAdapter(context, async (process) => {
          const client = liveClient(process, root, failures);
          const compare = async (what: string) => {
            const snapshot = await client.ok('live_snapshot', {}, `snapshot ${what}`);
            if (snapshot === null) return;
            const want = expected('r1', snapshot.last_seq as number | null);
            if (!Array.isArray(snapshot.tools)) {
              failures.push(
                `snapshot ${what}: no \`tools\` (adapter.md §5.7), where the records hold ${want.length} call(s)`,
              );
              return;
            }
            if (canonical(snapshot.tools) !== canonical(want))
              failures.push(
                `snapshot ${what}: tools ${JSON.stringify(snapshot.tools).slice(0, 400)}, not the calls its records hold: ${JSON.stringify(want).slice(0, 400)}`,
              );
          };
          await client.ok('live_send', { request_id: 'r1', content: 'hello' }, 'send r1');
          await client.step('r1', 'delta', { text: 'Looking' });
          await client.step('r1', 'tool_start', { tool_call_id: 'c1', tool: 'search', args: { q: 'tides', n: 3 } });
          await compare('while c1 runs');
          await client.step('r1', 'tool_end', { tool_call_id: 'c1', is_error: true });
          await client.step('r1', 'tool_start', { tool_call_id: 'c2', tool: 'fetch' });
          await compare('after c1 failed, while c2 runs');
          await client.step('r1', 'tool_end', { tool_call_id: 'c2' });
          await client.step('r1', 'delta', { text: 'Found' });
          await compare('after both ended');
          const started = recordsOf(log, failures).filter((r) => r.type === 'tool.start').length;
          if (started !== 2) failures.push(`the log holds ${started} tool.start record(s) for r1's two calls, not 2`);
          await client.step('r1', 'done');
        });
        return failures;
      }),
  );
}
