import { type EventLog, SERVER_STARTUP_RECOVERY, type TurnJournal } from '@turnjournal/writer';
import type { FileSystem } from '@turnjournal/writer/file-system';
import { readSubmittedMessages } from './submitted-reader.js';
import type { ViewFold } from './view-fold.js';

/** What restart recovery works with: the session's journals, its view of the runs, and its append path. */
export interface RecoveryContext {
  readonly log: EventLog;
  readonly turns: TurnJournal;
  /** The session's fold: every run of the log, from the writer's run index. */
  readonly fold: ViewFold;
  readonly fs: FileSystem;
  /** Appends a record through the session (pending until durable). */
  readonly append: (type: string, payload: Record<string, unknown>) => unknown;
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
  const { log, turns, fold, append } = context;
  const snapshot = log.snapshot();
  const active = snapshot.activeRun;
  // Runs abandoned before the last one, which the tail fold does not see but the run index does (TJ-LIVE-016).
  const abandoned = [...fold.runs.values()]
    .filter((run) => run.finish === null && run.requestId !== active?.requestId)
    .sort((a, b) => a.startedSeq - b.startedSeq);
  for (const run of abandoned) append('chat.cancelled', { request_id: run.requestId, reason: SERVER_STARTUP_RECOVERY });
  if (active !== null) {
    const overlay = snapshot.overlay;
    if (overlay !== null && overlay.requestId === active.requestId && overlay.text !== '')
      append('message_append', {
        message: {
          role: 'assistant',
          content: overlay.text,
          id: overlay.messageId,
          request_id: active.requestId,
          partial: true,
        },
      });
    append('chat.cancelled', { request_id: active.requestId, reason: SERVER_STARTUP_RECOVERY });
  }
  await restoreUserMessages(context);
  await context.durable();
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
async function restoreUserMessages({ log, turns, fs, append }: RecoveryContext): Promise<void> {
  const present = new Set(log.snapshot().messages.map((m) => (m as { id?: unknown }).id));
  const missing = new Set(
    turns
      .pendingTurns()
      .map((t) => t.turnId)
      .filter((turnId) => !present.has(`${turnId}.user`)),
  );
  if (missing.size === 0) return;
  const found = await readSubmittedMessages(fs, turns.path, missing);
  for (const turnId of missing) {
    const submitted = found.get(turnId);
    if (submitted === undefined) continue;
    append('message_append', {
      message: {
        role: 'user',
        content: submitted.content,
        id: `${turnId}.user`,
        request_id: turnId,
        ...(submitted.attachments === undefined ? {} : { attachments: submitted.attachments }),
      },
    });
  }
}
