import { type WriterContext, withAdapter } from './context.js';
import { journalAccess } from './journal-access.js';
import { eventLogOf, inFreshStore } from './lifecycle.js';
import { appendMessages, PLANTED_MESSAGES, plantedMessages } from './planted-event-log.js';

// `writer/event-epoch`: a writer that continues an event log keeps the log's epoch on the checkpoints it appends
// (spec §6.7, TJ-EVENT-024), so that a recovery from that checkpoint, or a compaction cut there, keeps the log's history.

type Json = Record<string, unknown>;
/** The epoch the harness's log was created with; no writer would choose it. */
const EPOCH = 'tj-kit-epoch-3f6d1c0a';
/** Records the harness appends through `event_append`, each by a writer opened for it (adapter.md §5.4). */
const APPENDED = 3;

/** True for a record that closes a checkpoint: a `checkpoint`, or the last part of a split one (spec §6.2). */
function closesCheckpoint(record: Json): boolean {
  if (record.type === 'checkpoint') return true;
  const payload = (record.payload ?? {}) as Json;
  return record.type === 'checkpoint.part' && typeof payload.parts === 'number' && payload.part === payload.parts - 1;
}

/**
 * `writer/event-epoch` (TJ-EVENT-024): the harness writes a log of 49 messages whose first record carries an epoch and
 * has no checkpoint, then appends three messages, each through a writer opened on the log; every checkpoint the
 * writers append (the last part of a split one) must carry that epoch, and no record they append another one.
 */
export async function eventEpochCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/event-epoch',
    "a writer continuing an event log writes the log's epoch on every checkpoint it appends and no other epoch",
    'writer',
    ['TJ-EVENT-024'],
    async () => {
      let checkpoints = 0;
      const outcome = await inFreshStore(context, 'event', eventLogOf, (_root, file) =>
        withAdapter(context, async (process) => {
          const failures: string[] = [];
          const journal = journalAccess(context, process);
          await journal.plant(
            file,
            plantedMessages(EPOCH, (seq) => `planted ${seq}`),
          );
          await appendMessages(process, file, APPENDED, `a log of epoch ${EPOCH}`, failures);
          const appended = (await journal.records(file, failures)).slice(PLANTED_MESSAGES);
          for (const record of appended) {
            const closes = closesCheckpoint(record);
            if (closes) checkpoints++;
            if (closes && record.epoch !== EPOCH)
              failures.push(
                `the ${String(record.type)} at seq ${String(record.seq)} carries epoch ${JSON.stringify(record.epoch)}, not the log's ${JSON.stringify(EPOCH)}: a recovery from it, or a compaction cut there, loses the log's history`,
              );
            else if (!closes && record.epoch !== undefined && record.epoch !== EPOCH)
              failures.push(
                `the ${String(record.type)} at seq ${String(record.seq)} carries epoch ${JSON.stringify(record.epoch)} in a log of epoch ${JSON.stringify(EPOCH)}`,
              );
          }
          return failures;
        }),
      );
      // A writer need not checkpoint (TJ-EVENT-006 is a SHOULD): with none appended there is nothing this check can see.
      if ('failures' in outcome && outcome.failures.length === 0 && checkpoints === 0)
        return {
          skip: `the writers appended no checkpoint after ${PLANTED_MESSAGES + APPENDED} records (TJ-EVENT-006 is a SHOULD): nothing to judge`,
        };
      return outcome;
    },
  );
}
