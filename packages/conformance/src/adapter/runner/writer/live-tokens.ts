import type { AdapterProcess } from '../../process.js';
import type { Outcome } from '../record.js';
import { recordsOf } from './answers.js';
import { answerCode, type WriterContext, withAdapter } from './context.js';
import { eventLogOf, inFreshStore, liveClient, messageOf, payloadOf, SESSION } from './live-client.js';

// The token modes of live runs (spec §18.2): what a run of deltas leaves in the log in `durable` and in `segments`
// mode, and how a session's mode applies to its runs. Each check needs the modes it drives; an adapter that cannot
// give one session a mode answers `unsupported` (TJ-CONF-071) and the check is skipped, naming the mode.

type Client = ReturnType<typeof liveClient>;

/** The harness's view of one run in the log: its `chat.delta` texts, segment starts and assistant messages. */
function runRecords(log: string, requestId: string, failures: string[]) {
  const records = recordsOf(log, failures).filter(
    (r) => payloadOf(r).request_id === requestId || messageOf(r).request_id === requestId,
  );
  return {
    deltas: records.filter((r) => r.type === 'chat.delta').map((r) => payloadOf(r).text),
    segmentStarts: records.filter((r) => r.type === 'assistant.segment.started').map((r) => payloadOf(r).message_id),
    assistant: records
      .filter((r) => r.type === 'message_append' && messageOf(r).role === 'assistant')
      .map((r) => ({ id: messageOf(r).id, content: messageOf(r).content })),
    /** Types in log order, from the segment starts and deltas on (what a mode decides). */
    streamTypes: records
      .filter((r) => r.type === 'chat.delta' || r.type === 'assistant.segment.started' || r.type === 'message_append')
      .map((r) => String(r.type)),
  };
}

/**
 * Sends `live_open` naming `mode`: null when done, a skip when the adapter answers `unsupported` (TJ-CONF-071), a
 * failure otherwise.
 */
async function openIn(
  process: AdapterProcess,
  root: string,
  mode: string,
  failures: string[],
): Promise<Outcome | null> {
  const code = await answerCode(process.request('live_open', { root, session_id: SESSION, tokens: mode }));
  if (code === 'unsupported')
    return { skip: `not applicable: the adapter gives no session token mode ${mode} (TJ-CONF-071)` };
  if (code !== 'ok') failures.push(`live_open with tokens ${mode}: answered ${code}`);
  return null;
}

/** Streams `deltas` as run `requestId` and finishes it. */
async function runOf(client: Client, requestId: string, deltas: readonly string[]): Promise<void> {
  await client.ok('live_send', { request_id: requestId, content: 'hello' }, `send ${requestId}`);
  for (const text of deltas) await client.step(requestId, 'delta', { text });
  await client.step(requestId, 'done');
}

const json = (value: unknown) => JSON.stringify(value);

/** `writer/live-tokens-durable`: in `durable` mode each delta of a run is one `chat.delta` holding its text (TJ-LIVE-058). */
export async function tokensDurableCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/live-tokens-durable',
    'in durable token mode each delta is one chat.delta record holding its text',
    'writer',
    ['TJ-LIVE-058', 'TJ-CONF-071'],
    () =>
      inFreshStore(context, async (root) => {
        const failures: string[] = [];
        const log = eventLogOf(root);
        const deltas = ['Hel', 'lo\n\nWo', 'r', 'ld'];
        const skip = await withAdapter(context, async (process) => {
          const unsupported = await openIn(process, root, 'durable', failures);
          if (unsupported !== null) return unsupported;
          await runOf(liveClient(process, root, failures), 'r1', deltas);
          return null;
        });
        if (skip !== null) return skip;
        const run = runRecords(log, 'r1', failures);
        if (json(run.deltas) !== json(deltas))
          failures.push(
            `in durable mode r1's chat.delta texts are ${json(run.deltas)}, not one per delta: ${json(deltas)}`,
          );
        return failures;
      }),
  );
}

/**
 * `writer/live-tokens-segments`: in `segments` mode no record is written per delta: a paragraph end writes the
 * segment's start and one `chat.delta` through it, the rest is in the segment's message only, and a segment closed
 * before a paragraph end costs nothing but its message (TJ-LIVE-059).
 */
export async function tokensSegmentsCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/live-tokens-segments',
    'in segments token mode a paragraph end writes one chat.delta, the rest only the message',
    'writer',
    ['TJ-LIVE-059', 'TJ-CONF-071'],
    () =>
      inFreshStore(context, async (root) => {
        const failures: string[] = [];
        const log = eventLogOf(root);
        const skip = await withAdapter(context, async (process) => {
          const unsupported = await openIn(process, root, 'segments', failures);
          if (unsupported !== null) return unsupported;
          const client = liveClient(process, root, failures);
          await client.ok('live_send', { request_id: 'r1', content: 'hello' }, 'send r1');
          // The paragraph end straddles two deltas, and text follows it in the second.
          for (const text of ['Hel', 'lo\n', '\nWo', 'r', 'ld']) await client.step('r1', 'delta', { text });
          await client.step('r1', 'tool_start', { tool_call_id: 'c1', tool: 'search' });
          await client.step('r1', 'tool_end', { tool_call_id: 'c1' });
          for (const text of ['o', 'k']) await client.step('r1', 'delta', { text });
          await client.step('r1', 'done');
          return null;
        });
        if (skip !== null) return skip;
        const run = runRecords(log, 'r1', failures);
        if (json(run.deltas) !== json(['Hello\n\n']))
          failures.push(
            `in segments mode r1's chat.delta texts are ${json(run.deltas)}, not the one text through its paragraph end: ["Hello\\n\\n"]`,
          );
        if (json(run.assistant.map((m) => m.content)) !== json(['Hello\n\nWorld', 'ok']))
          failures.push(
            `r1's assistant messages are ${json(run.assistant.map((m) => m.content))}, not each segment's whole text: ["Hello\\n\\nWorld","ok"]`,
          );
        const first = run.assistant[0]?.id;
        if (json(run.segmentStarts) !== json([first]))
          failures.push(
            `r1's segment starts are ${json(run.segmentStarts)}: only the segment that wrote text before its message (${json(first)}) starts in the log`,
          );
        const expected = [
          'message_append',
          'assistant.segment.started',
          'chat.delta',
          'message_append',
          'message_append',
        ];
        if (json(run.streamTypes) !== json(expected))
          failures.push(`r1's records are ${json(run.streamTypes)} in log order, not ${json(expected)}`);
        return failures;
      }),
  );
}

/**
 * `writer/live-tokens-session`: a session's mode applies to every run it starts until another is named — a `live_open`
 * naming none keeps it —, a run keeps the mode it started in when the session's mode changes while it streams, and a
 * mode the session does not state is refused and changes nothing (TJ-LIVE-066, TJ-LIVE-058).
 */
export async function tokensSessionCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/live-tokens-session',
    "a session's token mode holds for its runs until another is named; a run keeps the mode it started in",
    'writer',
    ['TJ-LIVE-066', 'TJ-LIVE-058', 'TJ-CONF-071'],
    () =>
      inFreshStore(context, async (root) => {
        const failures: string[] = [];
        const log = eventLogOf(root);
        const deltasOf = (requestId: string) => runRecords(log, requestId, failures).deltas;
        const skip = await withAdapter(context, async (process) => {
          const client = liveClient(process, root, failures);
          for (const mode of ['durable', 'segments']) {
            const unsupported = await openIn(process, root, mode, failures);
            if (unsupported !== null) return unsupported;
          }
          await client.ok('live_open', {}, 'live_open naming no mode');
          await runOf(client, 'r1', ['a', 'b', 'c']);
          if (json(deltasOf('r1')) !== '[]')
            failures.push(
              `r1 started after a live_open naming no mode, in a session opened in segments mode: it wrote chat.delta ${json(deltasOf('r1'))} (the session's mode holds until another is named)`,
            );
          await client.ok('live_send', { request_id: 'r2', content: 'hello' }, 'send r2');
          await client.step('r2', 'delta', { text: 'p' });
          await client.ok('live_open', { tokens: 'durable' }, 'live_open naming durable while r2 streams');
          await client.step('r2', 'delta', { text: 'q' });
          await client.step('r2', 'done');
          if (json(deltasOf('r2')) !== '[]')
            failures.push(
              `r2 started in segments mode and the session switched to durable while it streamed: it wrote chat.delta ${json(deltasOf('r2'))} (a run keeps the mode it started in)`,
            );
          await runOf(client, 'r3', ['m', 'n']);
          if (json(deltasOf('r3')) !== '["m","n"]')
            failures.push(
              `r3 started after the switch to durable mode: its chat.delta texts are ${json(deltasOf('r3'))}, not ["m","n"]`,
            );
          await client.refused(
            log,
            'live_open',
            { tokens: 'paragraphs' },
            'live_open naming token mode "paragraphs"',
            'bad_request',
          );
          await runOf(client, 'r4', ['u', 'v']);
          if (json(deltasOf('r4')) !== '["u","v"]')
            failures.push(
              `r4 started after a refused mode "paragraphs" in a durable session: its chat.delta texts are ${json(deltasOf('r4'))}, not ["u","v"]`,
            );
          return null;
        });
        return skip ?? failures;
      }),
  );
}
