import { type JournalSource, readJournal } from '@turnjournal/reader';
import type { Attachment } from '@turnjournal/schema';
import type { FileSystem } from '@turnjournal/writer';

/** What a turn's `submitted` record holds of the user's message. */
export interface SubmittedMessage {
  readonly content: string;
  readonly attachments?: readonly Attachment[];
}

/**
 * Reads the user messages of the `submitted` records of `turnIds` from a turn journal (spec §5.3), through the
 * writer's file-system layer and the path its writer reports. Restart recovery needs them only for turns whose user
 * message a crash kept out of the event log (TJ-LIVE-019), which is rare, so this one read of the journal is paid only
 * then. The first `submitted` of a turn wins, as in the fold.
 */
export async function readSubmittedMessages(
  fs: FileSystem,
  path: string,
  turnIds: ReadonlySet<string>,
): Promise<Map<string, SubmittedMessage>> {
  const found = new Map<string, SubmittedMessage>();
  const fd = await fs.open(path, 'read');
  try {
    const source: JournalSource = {
      read: (buffer, offset, length, position) => fs.read(fd, buffer, offset, length, position),
    };
    for await (const batch of readJournal(path, { source, mode: 'tolerant' })) {
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
    await fs.close(fd);
  }
  return found;
}
