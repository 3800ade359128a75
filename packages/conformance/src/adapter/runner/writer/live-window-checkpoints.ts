import { bytesOf } from './answers.js';
import { answerCode, type WriterContext, withAdapter } from './context.js';
import { describe, eventLogOf, inFreshStore, type Json, liveClient, SESSION } from './live-client.js';

// `writer/live-window-checkpoints`: a live subscriber that keeps reading while a conversation outgrows the window
// (TJ-LIVE-067).

/** The window the check asks for, and the largest it grows a conversation past when the adapter states another. */
const ASKED_WINDOW_BYTES = 64 * 1024;
const MOST_GROWN_BYTES = 1024 * 1024;
/**
 * Each run's user content and its one delta: 12 KiB of messages a run, so the first checkpoint a writer appends after
 * TJ-EVENT-006's default 50 records (about 9 runs) holds over 100 KiB of conversation, past the asked window.
 */
const RUN_TEXT_CHARS = 6 * 1024;
/** The subscription ends at this seq: past that first checkpoint (about seq 54), and reached within MAX_RUNS runs. */
const UNTIL_SEQ = 80;
const MAX_RUNS = 40;
/** A hang guard: the runs reach UNTIL_SEQ in well under a second unloaded. */
const SUBSCRIPTION_WAIT_MS = 30_000;

/** The seqs and line lengths of the log's checkpoint lines (a split one's parts too). */
function checkpointLines(file: string): { seq: number; bytes: number }[] {
  const found: { seq: number; bytes: number }[] = [];
  for (const line of bytesOf(file).toString('utf8').split('\n')) {
    // Only the lines that name a checkpoint type are parsed: the rest of the log is the runs' text.
    if (!line.includes('"type":"checkpoint')) continue;
    const record = JSON.parse(line) as Json;
    if (typeof record.seq === 'number' && String(record.type).startsWith('checkpoint'))
      found.push({ seq: record.seq, bytes: Buffer.byteLength(line) });
  }
  return found;
}

/**
 * `writer/live-window-checkpoints`: with the window the adapter states (the check asks for 64 KiB), a subscriber that
 * reads every record as it comes while runs grow the conversation past the window is never cut off, though every
 * checkpoint's line then repeats more than the window: a checkpoint of the session's own messages counts at what it
 * adds, not at its line (TJ-LIVE-067, TJ-CONF-074).
 */
export async function windowCheckpointsCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/live-window-checkpoints',
    'a subscriber that keeps reading is not cut off by checkpoints longer than the window',
    'writer',
    ['TJ-LIVE-067', 'TJ-CONF-074'],
    () =>
      inFreshStore(context, async (root) => {
        const failures: string[] = [];
        const log = eventLogOf(root);
        return withAdapter(context, async (process) => {
          const client = liveClient(process, root, failures);
          // An error answer here fails the check with its message: the adapter must take the request (TJ-CONF-074).
          const opened = await process.request('live_open', {
            root,
            session_id: SESSION,
            window_bytes: ASKED_WINDOW_BYTES,
          });
          const window = opened.window_bytes;
          if (typeof window !== 'number' || !Number.isInteger(window) || window < 1) {
            failures.push(`live_open answered window_bytes ${JSON.stringify(window)}, not a bound ≥ 1 (TJ-CONF-074)`);
            return failures;
          }
          if (window > MOST_GROWN_BYTES)
            return {
              skip: `not applicable: the adapter's window is ${window} bytes (asked for ${ASKED_WINDOW_BYTES}), more than the ${MOST_GROWN_BYTES} this check grows a conversation to (TJ-CONF-074)`,
            };
          let settled = false;
          const subscription = process.request('live_subscribe', {
            root,
            session_id: SESSION,
            after: -1,
            until_seq: UNTIL_SEQ,
            timeout_ms: SUBSCRIPTION_WAIT_MS * context.timeoutScale,
          });
          const outcome = answerCode(subscription).finally(() => {
            settled = true;
          });
          // Each run awaits every answer, so the subscriber reads as promptly as the adapter lets it.
          for (let run = 0; run < MAX_RUNS && !settled; run += 1) {
            const id = `w${run}`;
            const text = (c: string) => `${c}${run}`.padEnd(RUN_TEXT_CHARS, c);
            await client.ok('live_send', { request_id: id, content: text('u') }, `send ${id}`);
            await client.step(id, 'delta', { text: text('a') });
            await client.step(id, 'done');
          }
          const answered = await outcome;
          if (answered !== 'ok') {
            failures.push(`the subscription while the runs streamed: answered ${answered}`);
            return failures;
          }
          const events = ((await subscription).events ?? []) as Json[];
          const cutOff = events.find((e) => 'cut_off' in e);
          const long = checkpointLines(log).filter((c) => c.bytes > window);
          if (cutOff !== undefined) {
            const listed = long.map((c) => `${c.seq} (${c.bytes} bytes)`);
            failures.push(
              `the subscriber, reading every record as it came, was cut off at cursor ${String(cutOff.cut_off)} with a window of ${window} bytes; the log's checkpoints longer than the window: ${listed.join(', ') || 'none'}`,
            );
            return failures;
          }
          const reached = describe(events).at(-1);
          if (Number(reached) < UNTIL_SEQ)
            failures.push(
              `the subscription ended at ${String(reached)}, before seq ${UNTIL_SEQ}, and no run was left to reach it`,
            );
          if (failures.length === 0 && !long.some((c) => c.seq <= UNTIL_SEQ))
            return {
              skip: `not applicable: through seq ${UNTIL_SEQ} the log holds no checkpoint longer than the ${window}-byte window (checkpoints: ${JSON.stringify(checkpointLines(log))}), so none could cut the subscriber off`,
            };
          return failures;
        });
      }),
  );
}
