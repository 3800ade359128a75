import type { RecordStore } from '@turnjournal/reader/record-store';
import type { Attachment } from '@turnjournal/schema';

/** What a turn's `submitted` record holds of the user's message. */
export interface SubmittedMessage {
  readonly content: string;
  readonly attachments?: readonly Attachment[];
}

/**
 * Reads the user messages of the `submitted` records of `turnIds` from a session's turn journal (spec §5.3), through
 * the record store. Restart recovery needs them only for turns whose user
 * message a crash kept out of the event log (TJ-LIVE-019), which is rare, so this one read of the journal is paid only
 * then. The first `submitted` of a turn wins, as in the fold.
 */
export async function readSubmittedMessages(
  store: RecordStore,
  sessionId: string,
  turnIds: ReadonlySet<string>,
): Promise<Map<string, SubmittedMessage>> {
  const found = new Map<string, SubmittedMessage>();
  const reader = await store.openReader({ family: 'turn', sessionId });
  try {
    for await (const batch of reader.records({ mode: 'tolerant' })) {
      for (const item of batch) {
        if (item.kind !== 'record') continue;
        const value = item.record.value as Record<string, unknown>;
        const turnId = value.turn_id;
        if (value.event !== 'submitted' || typeof turnId !== 'string' || !turnIds.has(turnId) || found.has(turnId))
          continue;
        if (typeof value.content !== 'string') continue;
        found.set(turnId, {
          content: value.content,
          ...(Array.isArray(value.attachments) ? { attachments: value.attachments as Attachment[] } : {}),
        });
      }
    }
  } finally {
    await reader.close();
  }
  return found;
}
