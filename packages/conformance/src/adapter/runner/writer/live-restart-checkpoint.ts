import { bytesOf, parseRecords } from './answers.js';
import { type WriterContext, withAdapter } from './context.js';
import {
  eventLine,
  eventLogOf,
  inFreshStore,
  liveClient,
  SESSION,
  turnJournalOf,
  turnLine,
  writeLines,
} from './live-client.js';

// `writer/live-restart-checkpoint`: what recovery on open may cost on a disk that has just run full (TJ-LIVE-023).

/** Finished runs before the crashed one, and the characters of each of their user and assistant messages. */
const FINISHED_RUNS = 128;
const MESSAGE_CHARS = 2048;
/**
 * Most bytes recovery may append to the log here: its records (a partial message of 13 characters, a
 * `chat.cancelled`) take well under 1 KiB; the conversation's messages are 512 KiB, so a checkpoint passes it.
 */
const RECOVERY_BYTES_MAX = 16 * 1024;

/**
 * A long conversation (FINISHED_RUNS finished runs, no checkpoint yet, so one is due at the next append: TJ-EVENT-006)
 * and run `r-last` cut off mid-segment by a crash.
 */
function writeLongCrashedStore(root: string): void {
  const ts = '2026-06-19T03:14:07Z';
  const lines: string[] = [];
  for (let i = 0; i < FINISHED_RUNS; i += 1) {
    const id = `r${i}`;
    const seq = lines.length;
    const text = (c: string) => `${c}${i}`.padEnd(MESSAGE_CHARS, c);
    lines.push(
      eventLine(seq, 'chat.started', { request_id: id, content: text('u') }, ts),
      eventLine(seq + 1, 'message_append', {
        message: { role: 'user', content: text('u'), id: `${id}.user`, request_id: id },
      }),
      eventLine(seq + 2, 'message_append', {
        message: { role: 'assistant', content: text('a'), id: `${id}.a1`, request_id: id },
      }),
      eventLine(seq + 3, 'chat.done', { request_id: id }, ts),
    );
  }
  const seq = lines.length;
  lines.push(
    eventLine(seq, 'chat.started', { request_id: 'r-last', content: 'go on' }),
    eventLine(seq + 1, 'message_append', {
      message: { role: 'user', content: 'go on', id: 'r-last.user', request_id: 'r-last' },
    }),
    eventLine(seq + 2, 'assistant.segment.started', { request_id: 'r-last', message_id: 'r-last.a1' }),
    eventLine(seq + 3, 'chat.delta', { request_id: 'r-last', message_id: 'r-last.a1', text: 'Where were we' }),
  );
  writeLines(eventLogOf(root), lines);
  writeLines(turnJournalOf(root), [
    turnLine('submitted', 'r-last', { session_id: SESSION, stream_id: 'r-last', role: 'user', content: 'go on' }),
    turnLine('worker_started', 'r-last', { session_id: SESSION, stream_id: 'r-last' }),
  ]);
}

/**
 * `writer/live-restart-checkpoint`: opening a session whose long conversation a crash left with an unfinished run
 * appends the recovery's own records only — no `checkpoint`, though one is due, and nothing whose size follows the
 * conversation (TJ-LIVE-023).
 */
export async function restartCheckpointCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/live-restart-checkpoint',
    'recovery on open of a long crashed conversation appends no checkpoint, only its own few records',
    'writer',
    ['TJ-LIVE-023'],
    () =>
      inFreshStore(context, async (root) => {
        const failures: string[] = [];
        writeLongCrashedStore(root);
        const log = eventLogOf(root);
        const before = bytesOf(log);
        await withAdapter(context, (process) => liveClient(process, root, failures).ok('live_open', {}, 'live_open'));
        const after = bytesOf(log);
        if (!after.subarray(0, before.length).equals(before)) {
          failures.push('the lines the crash left were not kept byte for byte');
          return failures;
        }
        const appended = after.subarray(before.length);
        const records = parseRecords(appended, failures);
        const types = records.map((r) => String(r.type));
        if (!types.includes('chat.cancelled'))
          failures.push(`recovery appended ${JSON.stringify(types)}: no chat.cancelled for r-last, so it did not run`);
        if (types.includes('checkpoint'))
          failures.push(
            `recovery appended a checkpoint (${JSON.stringify(types)}): it repeats the whole ${FINISHED_RUNS * 2}-message conversation`,
          );
        if (appended.length > RECOVERY_BYTES_MAX)
          failures.push(
            `recovery appended ${appended.length} bytes to the log (${JSON.stringify(types)}), more than the ${RECOVERY_BYTES_MAX} its records need`,
          );
        return failures;
      }),
  );
}
