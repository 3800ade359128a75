import { bytesOf } from './answers.js';
import { type WriterContext, withAdapter } from './context.js';
import {
  eventLine,
  eventLogOf,
  finishedRun,
  inFreshStore,
  type Json,
  liveClient,
  messageOf,
  payloadOf,
  SESSION,
  turnJournalOf,
  turnLine,
  writeLines,
} from './live-client.js';

// `writer/live-restart`: a session opened on a store a crashed server left (spec §18.5).

/**
 * The store a crash left: run `r2` finished but its turn still pending; run `r1` cut off mid-segment ("Roses are
 * red" streamed); turn `r3` submitted with nothing in the event log (the crash came before its run's records).
 */
function writeCrashedStore(root: string): void {
  const submitted = (id: string, content: string) =>
    turnLine('submitted', id, { session_id: SESSION, stream_id: id, role: 'user', content });
  writeLines(turnJournalOf(root), [
    submitted('r2', 'first'),
    turnLine('worker_started', 'r2', { session_id: SESSION, stream_id: 'r2' }),
    submitted('r1', 'write a poem'),
    turnLine('worker_started', 'r1', { session_id: SESSION, stream_id: 'r1' }),
    submitted('r3', 'are you there?'),
  ]);
  writeLines(eventLogOf(root), [
    ...finishedRun(0, 'r2', '2026-06-19T03:14:07Z'),
    eventLine(5, 'chat.started', { request_id: 'r1', content: 'write a poem' }),
    eventLine(6, 'message_append', {
      message: { role: 'user', content: 'write a poem', id: 'r1.user', request_id: 'r1' },
    }),
    eventLine(7, 'assistant.segment.started', { request_id: 'r1', message_id: 'r1.a1' }),
    eventLine(8, 'chat.delta', { request_id: 'r1', message_id: 'r1.a1', text: 'Roses are' }),
    eventLine(9, 'chat.delta', { request_id: 'r1', message_id: 'r1.a1', text: ' red' }),
  ]);
}

/** The records appended to `file` since it held `before` (checkpoints aside: a writer may add them any time). */
export function appendedSince(file: string, before: Buffer, failures: string[], what: string): Json[] {
  const now = bytesOf(file);
  if (!now.subarray(0, before.length).equals(before)) {
    failures.push(`${what}: the lines the crash left were not kept byte for byte`);
    return [];
  }
  const added: Json[] = [];
  for (const line of now
    .subarray(before.length)
    .toString('utf8')
    .split('\n')
    .filter((l) => l.length > 0)) {
    try {
      added.push(JSON.parse(line) as Json);
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      failures.push(`${what}: an appended line is not JSON: ${line.slice(0, 80)}`);
    }
  }
  return added.filter((r) => r.type !== 'checkpoint');
}

/**
 * `writer/live-restart`: opening a session a crash left closes what it abandoned (TJ-LIVE-016): the unfinished run with
 * `chat.cancelled` `server_startup_recovery`, after its open segment's text as a partial assistant message
 * (TJ-LIVE-017); the turn whose run finished `completed`, the others `interrupted`; the user message of the turn whose
 * run never started restored, without starting a run (TJ-LIVE-019). Opening it again changes nothing.
 */
export async function restartCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/live-restart',
    'opening a crashed session closes its run and turns, keeps the partial segment, restores a lost user message',
    'writer',
    ['TJ-LIVE-016', 'TJ-LIVE-017', 'TJ-LIVE-019', 'TJ-CONF-040'],
    () =>
      inFreshStore(context, async (root) => {
        const failures: string[] = [];
        writeCrashedStore(root);
        const journal = turnJournalOf(root);
        const log = eventLogOf(root);
        // The lines, not the file: a writer that holds the file open may keep pre-allocated space after them (§3.8).
        const [journalBefore, logBefore] = [bytesOf(journal), bytesOf(log)];
        await withAdapter(context, (process) => liveClient(process, root, failures).ok('live_open', {}, 'live_open'));
        const events = appendedSince(log, logBefore, failures, 'the event log');
        const turns = appendedSince(journal, journalBefore, failures, 'the turn journal');
        const describeEvent = (r: Json) => {
          const p = payloadOf(r);
          if (r.type !== 'message_append')
            return `${String(r.type)} ${String(p.request_id)} ${String(p.reason ?? '')}`.trim();
          const m = messageOf(r);
          return `message ${String(m.role)} ${String(m.id)} ${JSON.stringify(m.content)}${m.partial === true ? ' partial' : ''} ${String(m.request_id)}`;
        };
        const got = events.map(describeEvent);
        const partial = 'message assistant r1.a1 "Roses are red" partial r1';
        const cancelled = 'chat.cancelled r1 server_startup_recovery';
        const restored = 'message user r3.user "are you there?" r3';
        for (const expected of [partial, cancelled, restored])
          if (got.filter((g) => g === expected).length !== 1)
            failures.push(`the event log did not get exactly one "${expected}"`);
        if (got.indexOf(partial) > got.indexOf(cancelled))
          failures.push('the partial message was appended after the run was cancelled (TJ-LIVE-017)');
        const extra = got.filter((g) => g !== partial && g !== cancelled && g !== restored);
        if (extra.length > 0)
          failures.push(`recovery appended other event records: ${JSON.stringify(extra).slice(0, 200)}`);
        const closing = turns
          .map((r) => `${String(r.turn_id)} ${String(r.event)} ${String(r.reason ?? '')}`.trim())
          .sort();
        const expectedTurns = [
          'r1 interrupted server_startup_recovery',
          'r2 completed',
          'r3 interrupted server_startup_recovery',
        ];
        if (JSON.stringify(closing) !== JSON.stringify(expectedTurns))
          failures.push(`the turn journal got ${JSON.stringify(closing)}, not ${JSON.stringify(expectedTurns)}`);
        const [journalAfter, logAfter] = [bytesOf(journal), bytesOf(log)];
        await withAdapter(context, (process) =>
          liveClient(process, root, failures).ok('live_open', {}, 'a second live_open'),
        );
        if (
          !bytesOf(journal).equals(journalAfter) ||
          appendedSince(log, logAfter, failures, 'the event log').length > 0
        )
          failures.push('opening the recovered session again wrote to it');
        return failures;
      }),
  );
}

/** The line limit of the spec's default (TJ-FRAME-031), which a live session's logs use. */
const LINE_LIMIT = 16 * 1024 * 1024;

/**
 * `writer/live-restart-long`: a crash left text longer than one message line can hold. Run `r1`'s open segment is 17
 * deltas of 1 MiB (a log written before the session refused the delta that made it so, or by another program); turn
 * `r3`'s content fits its `submitted` line and not the user message's. Recovery commits the longest prefix of each
 * that fits, marked `"partial": true` (TJ-LIVE-017, TJ-LIVE-019): the text is never dropped, and the open never fails.
 * "Longest" is checked to within 1 KiB: how a writer escapes its lines moves the exact cut by a few bytes.
 */
export async function restartLongTextCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/live-restart-long',
    'opening a crashed session keeps the longest prefix that fits of a segment or user message too long for one line',
    'writer',
    ['TJ-LIVE-017', 'TJ-LIVE-019'],
    () =>
      inFreshStore(context, async (root) => {
        const failures: string[] = [];
        const delta = 'a'.repeat(1024 * 1024);
        // 6 bytes within its `submitted` line, 10 over its message's.
        const user = 'u'.repeat(LINE_LIMIT - 140);
        writeLines(turnJournalOf(root), [
          turnLine('submitted', 'r1', { session_id: SESSION, stream_id: 'r1', role: 'user', content: 'long' }),
          turnLine('worker_started', 'r1', { session_id: SESSION, stream_id: 'r1' }),
          turnLine('submitted', 'r3', { session_id: SESSION, stream_id: 'r3', role: 'user', content: user }),
        ]);
        writeLines(eventLogOf(root), [
          eventLine(0, 'chat.started', { request_id: 'r1', content: 'long' }),
          eventLine(1, 'message_append', {
            message: { role: 'user', content: 'long', id: 'r1.user', request_id: 'r1' },
          }),
          eventLine(2, 'assistant.segment.started', { request_id: 'r1', message_id: 'r1.a1' }),
          ...Array.from({ length: 17 }, (_, i) =>
            eventLine(3 + i, 'chat.delta', { request_id: 'r1', message_id: 'r1.a1', text: delta }),
          ),
        ]);
        const logBefore = bytesOf(eventLogOf(root));
        await withAdapter(context, (process) => liveClient(process, root, failures).ok('live_open', {}, 'live_open'));
        const messages = appendedSince(eventLogOf(root), logBefore, failures, 'the event log')
          .filter((r) => r.type === 'message_append')
          .map(messageOf);
        const expectPrefix = (id: string, whole: string, what: string) => {
          const found = messages.filter((m) => m.id === id);
          if (found.length !== 1) return failures.push(`${what}: ${found.length} message(s) "${id}", not one`);
          const m = found[0] as Json;
          const content = typeof m.content === 'string' ? m.content : '';
          if (m.partial !== true) failures.push(`${what}: the message "${id}" is not marked "partial": true`);
          if (!whole.startsWith(content) || content.length < LINE_LIMIT - 1024 - 200)
            failures.push(
              `${what}: the message "${id}" holds ${content.length} characters, not the longest prefix of the ${whole.length} that fits in a line`,
            );
          return 0;
        };
        expectPrefix('r1.a1', delta.repeat(17), 'the open segment (TJ-LIVE-017)');
        expectPrefix('r3.user', user, 'the user message (TJ-LIVE-019)');
        return failures;
      }),
  );
}
