import type { RecordStore } from '@turnjournal/reader/record-store';
import { type EventLog, SERVER_STARTUP_RECOVERY, type TurnJournal } from '@turnjournal/writer';
import { oversizeRefusal } from '@turnjournal/writer/_internals';
import { readSubmittedMessages } from './submitted-reader.js';
import type { ViewFold } from './view-fold.js';

/** What restart recovery works with: the session's journals, its view of the runs, and its append path. */
export interface RecoveryContext {
  readonly log: EventLog;
  readonly turns: TurnJournal;
  /** The session's fold: every run of the log, from the writer's run index. */
  readonly fold: ViewFold;
  /** The store the session's journals are in. */
  readonly store: RecordStore;
  readonly sessionId: string;
  /** Appends a record through the session (pending until durable); the promise settles with the record's write. */
  readonly append: (type: string, payload: Record<string, unknown>) => Promise<unknown>;
  /** Makes everything appended durable and delivers it. */
  readonly durable: () => Promise<void>;
}

/**
 * Restart recovery (TJ-LIVE-016, TJ-LIVE-017, TJ-LIVE-019): the run a crash left open gets its open segment's text
 * committed as a partial assistant message, then `chat.cancelled` with `server_startup_recovery`, and so does every
 * run abandoned earlier; the user message of a turn that crashed before its run started is restored; then every
 * pending turn is closed from its run's outcome — never with a fabricated answer.
 */
export async function recoverSession(context: RecoveryContext): Promise<void> {
  const { log, turns, fold } = context;
  // Every append's own promise is awaited with the sync: one the log refused is this open's failure, not a rejection
  // nobody handles.
  const written: Promise<unknown>[] = [];
  const append = (type: string, payload: Record<string, unknown>) => {
    written.push(context.append(type, payload));
  };
  const snapshot = log.snapshot();
  const active = snapshot.activeRun;
  // Runs abandoned before the last one, which the tail fold does not see but the run index does (TJ-LIVE-016).
  const abandoned = [...fold.runs.values()]
    .filter((run) => run.finish === null && run.requestId !== active?.requestId)
    .sort((a, b) => a.startedSeq - b.startedSeq);
  for (const run of abandoned) append('chat.cancelled', { request_id: run.requestId, reason: SERVER_STARTUP_RECOVERY });
  if (active !== null) {
    const overlay = snapshot.overlay;
    if (overlay !== null && overlay.requestId === active.requestId && overlay.text !== '') {
      const message = (content: string) => ({
        message: { role: 'assistant', content, id: overlay.messageId, request_id: active.requestId, partial: true },
      });
      append('message_append', message(longestFitting(overlay.text, (text) => fits(log, message(text)))));
    }
    append('chat.cancelled', { request_id: active.requestId, reason: SERVER_STARTUP_RECOVERY });
  }
  await restoreUserMessages(context, append);
  await Promise.all([...written, context.durable()]);
  for (const { turnId } of turns.pendingTurns()) {
    const run = fold.runs.get(turnId);
    if (run?.finish === 'done') await turns.complete(turnId, { assistantMessageIndex: null });
    else if (run?.finish === 'error') await turns.interrupt(turnId, 'error');
    else await turns.interrupt(turnId, SERVER_STARTUP_RECOVERY);
  }
}

/**
 * Restart recovery of the user's words (TJ-LIVE-019): a pending turn whose user message the event log lacks — the
 * crash came after `submitted` was durable and before `chat.started` and the message were — gets that message back
 * from its `submitted` record (content and attachments), with the id and request id the session gives it. No run is
 * started and nothing is answered: the turn is then interrupted like any other.
 */
async function restoreUserMessages(
  { log, turns, store, sessionId }: RecoveryContext,
  append: (type: string, payload: Record<string, unknown>) => void,
): Promise<void> {
  const present = new Set(log.snapshot().messages.map((m) => (m as { id?: unknown }).id));
  const missing = new Set(
    turns
      .pendingTurns()
      .map((t) => t.turnId)
      .filter((turnId) => !present.has(`${turnId}.user`)),
  );
  if (missing.size === 0) return;
  const found = await readSubmittedMessages(store, sessionId, missing);
  for (const turnId of missing) {
    const submitted = found.get(turnId);
    if (submitted === undefined) continue;
    const message = (content: string, partial: boolean) => ({
      message: {
        role: 'user',
        content,
        id: `${turnId}.user`,
        request_id: turnId,
        ...(submitted.attachments === undefined ? {} : { attachments: submitted.attachments }),
        ...(partial ? { partial: true } : {}),
      },
    });
    // A content that fit its `submitted` line and not the message's (its line is a few bytes longer): the longest
    // prefix that fits, marked partial (TJ-LIVE-019).
    const content = submitted.content;
    const whole = fits(log, message(content, false));
    append(
      'message_append',
      whole
        ? message(content, false)
        : message(
            longestFitting(content, (text) => fits(log, message(text, true))),
            true,
          ),
    );
  }
}

/**
 * True when the log takes a `message_append` of `payload` for its size, whatever seq it gets: the records recovery
 * appends before it are far fewer than a million, and a seq further ahead only has more digits.
 */
function fits(log: EventLog, payload: Record<string, unknown>): boolean {
  return oversizeRefusal(log, 'message_append', payload, 1_000_000) === null;
}

/**
 * `text` when its message fits in a line of the log, else the longest prefix of it whose message does (TJ-LIVE-017,
 * TJ-LIVE-019): a log written before the session refused the delta that would make a segment too long, or by another
 * program, can hold more text than one message can. Found by bisection, each step an encoding of the message (a rare
 * case of a session's open), and never cut inside a surrogate pair.
 */
function longestFitting(text: string, fitsWith: (prefix: string) => boolean): string {
  if (fitsWith(text)) return text;
  let low = 0;
  let high = text.length - 1;
  while (low < high) {
    let middle = Math.ceil((low + high) / 2);
    // A prefix ends after a whole pair or before it: never with the pair's first half.
    if (isHighSurrogate(text.charCodeAt(middle - 1))) middle = middle + 1 <= high ? middle + 1 : middle - 1;
    if (middle <= low) break;
    if (fitsWith(text.slice(0, middle))) low = middle;
    else high = middle - 1;
  }
  return text.slice(0, low);
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
