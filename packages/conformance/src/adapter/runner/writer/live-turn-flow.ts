import { observeEventLog } from '../../../fixtures/run-store-fixtures.js';
import { bytesOf, recordsOf } from './answers.js';
import { answerCode, type WriterContext, withAdapter } from './context.js';
import {
  eventLogOf,
  inFreshStore,
  isFinishing,
  type Json,
  liveClient,
  messageOf,
  payloadOf,
  streamRun,
  turnJournalOf,
} from './live-client.js';

// `writer/live-turn-flow`: a turn streamed through the implementation's live session (spec §18.1).

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
 * request id (TJ-LIVE-001); a retry writes nothing and answers the run's status (TJ-LIVE-002), the same request id with
 * other content is refused and writes nothing (TJ-LIVE-034); a second send while a run
 * is active is refused (TJ-CONF-040); every segment and tool result is committed as a message (TJ-LIVE-004); the turn
 * ends `completed`.
 */
export async function turnFlowCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/live-turn-flow',
    'a live turn: turn id = request id, idempotent send, segments and tool results committed as messages',
    'writer',
    ['TJ-LIVE-001', 'TJ-LIVE-002', 'TJ-LIVE-004', 'TJ-LIVE-034', 'TJ-CONF-040'],
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
          // A request id names one turn: the same id with other content is no retry (TJ-LIVE-034).
          const conflict = await answerCode(
            process.request('live_send', { ...client.at, request_id: 'r1', content: 'hello again' }),
          );
          if (conflict !== 'refused')
            failures.push(
              `a send of r1 with other content than its first answered ${conflict}, not refused (TJ-LIVE-034)`,
            );
          if (!bothFiles().equals(afterRun))
            failures.push('a send of r1 with other content than its first wrote to the journals (TJ-LIVE-034)');
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
