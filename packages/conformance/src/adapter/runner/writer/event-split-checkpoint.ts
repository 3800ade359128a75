import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { observeEventLog } from '../../../fixtures/run-store-fixtures.js';
import { type WriterContext, withAdapter } from './context.js';
import { journalAccess } from './journal-access.js';
import { eventLogOf, inFreshStore } from './lifecycle.js';
import { appendMessages, PLANTED_MESSAGES, plantedMessages } from './planted-event-log.js';
import { sameJson } from './same-json.js';

// `writer/event-split-checkpoint`: a checkpoint whose line would be over the line-size limit goes out as a split
// checkpoint (spec §6.2), whose parts a reader can only use when they are whole, in order and alone (TJ-EVENT-030).

type Json = Record<string, unknown>;
/** The epoch the harness's log was created with (spec §6.7), which the checkpoint's last part must carry. */
const EPOCH = 'tj-kit-epoch-5a0e92b4';
/**
 * Long messages of the harness's log: 9 of 2 MiB, so the message list (18 MiB) is over the default line-size limit of
 * 16 MiB (TJ-DUR-028) while each message's line is well within it. Each has its own content, so parts out of order or
 * one left out give another list.
 */
const LONG_MESSAGES = 9;
const LONG_CHARS = 2 * 1024 * 1024;
/** Records the harness appends through `event_append`, each by a writer opened for it (adapter.md §5.4). */
const APPENDED = 2;
/** The members a part before the last may have: any other belongs on the last part only (TJ-EVENT-030). */
const PART_ENVELOPE = new Set(['seq', 'ts', 'type', 'payload']);
const PART_PAYLOAD = new Set(['part', 'parts', 'messages']);

/** The harness's log: short messages around `LONG_MESSAGES` long ones, the first record carrying the epoch. */
function plantedLog(): string {
  return plantedMessages(EPOCH, (seq) =>
    seq >= 1 && seq <= LONG_MESSAGES
      ? `long ${seq} `.padEnd(LONG_CHARS, String.fromCharCode(96 + seq))
      : `short ${seq}`,
  );
}

/** The index of the first message where `got` and `expected` differ, or null when they are equal. */
function firstDifference(got: readonly unknown[], expected: readonly unknown[]): number | null {
  const length = Math.max(got.length, expected.length);
  for (let i = 0; i < length; i++) if (!sameJson(got[i], expected[i])) return i;
  return null;
}

/** The start of a message's content, for a failure message: the long ones are megabytes. */
function preview(message: unknown): string {
  if (message === undefined) return '(none)';
  return JSON.stringify(JSON.stringify(message).slice(0, 60));
}

/** What a record is, for a failure message: its type, seq and, for a part, which part of how many. */
function describePart(record: Json): string {
  const payload = (record.payload ?? {}) as Json;
  return `${String(record.type)} at seq ${String(record.seq)} (part ${JSON.stringify(payload.part)} of ${JSON.stringify(payload.parts)})`;
}

/**
 * The failures of the split checkpoint whose first line is `records[start]`: its parts must follow one another with
 * consecutive seqs and nothing between, share `parts` and count `part` from 0 to `parts` − 1; the parts before the
 * last carry nothing but their messages; the last carries the log's epoch (TJ-EVENT-024). Returns the index after it
 * and its parts.
 */
function partFailures(records: readonly Json[], start: number, failures: string[]): { end: number; parts: Json[] } {
  const first = records[start] as Json;
  const count = ((first.payload ?? {}) as Json).parts;
  const parts: Json[] = [];
  let index = start;
  for (; index < records.length && records[index]?.type === 'checkpoint.part'; index++) {
    const record = records[index] as Json;
    const payload = (record.payload ?? {}) as Json;
    const n = parts.length;
    parts.push(record);
    if (payload.parts !== count)
      failures.push(`${describePart(record)} has parts ${JSON.stringify(payload.parts)}, not ${JSON.stringify(count)}`);
    if (payload.part !== n)
      failures.push(`${describePart(record)} is line ${n + 1} of its split checkpoint: its part must be ${n}`);
    if (n > 0 && record.seq !== ((parts[n - 1] as Json).seq as number) + 1)
      failures.push(
        `${describePart(record)} follows seq ${String(parts[n - 1]?.seq)}: the seqs of parts are consecutive`,
      );
    if (typeof count === 'number' && n + 1 >= count) {
      index++;
      break;
    }
  }
  if (typeof count !== 'number' || parts.length !== count) {
    const next = records[index];
    failures.push(
      `the split checkpoint from seq ${String(first.seq)} has ${parts.length} part line(s) before ${next === undefined ? 'the end of the log' : `the ${String(next.type)} at seq ${String(next.seq)}`}, not its parts ${JSON.stringify(count)}`,
    );
  }
  for (const record of parts.slice(0, -1)) {
    const extra = [
      ...Object.keys(record).filter((k) => !PART_ENVELOPE.has(k)),
      ...Object.keys((record.payload ?? {}) as Json)
        .filter((k) => !PART_PAYLOAD.has(k))
        .map((k) => `payload.${k}`),
    ];
    if (extra.length > 0)
      failures.push(
        `${describePart(record)}, not the last part, carries ${extra.join(', ')}: what a checkpoint carries besides its messages goes on the last part only`,
      );
  }
  const last = parts.at(-1) as Json;
  if (last.epoch !== EPOCH)
    failures.push(
      `the last part of the split checkpoint from seq ${String(first.seq)} carries epoch ${JSON.stringify(last.epoch)}, not the log's ${JSON.stringify(EPOCH)} (TJ-EVENT-024)`,
    );
  return { end: index, parts };
}

/**
 * `writer/event-split-checkpoint` (TJ-EVENT-030, TJ-EVENT-024): the harness writes a log of 49 messages, 18 MiB in
 * all and no checkpoint, its first record carrying an epoch, then appends two messages, each through a writer opened on
 * the log. A checkpoint then is over the default line-size limit: every split checkpoint the writers append must be
 * whole, in order and alone, its messages those that folding the log before it gives, and everything else on its last
 * part, the epoch included.
 */
export async function eventSplitCheckpointCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/event-split-checkpoint',
    'a split checkpoint has consecutive parts in order, the fold of the log before it, and its other members on its last part',
    'writer',
    ['TJ-EVENT-030', 'TJ-EVENT-024'],
    async () => {
      let split = 0;
      const outcome = await inFreshStore(context, 'event', eventLogOf, async (root, file) => {
        const failures: string[] = [];
        const records = await withAdapter(context, async (process) => {
          const journal = journalAccess(context, process);
          await journal.plant(file, plantedLog());
          await appendMessages(process, file, APPENDED, 'a log of 18 MiB of messages', failures);
          return journal.records(file, failures);
        });
        // The harness's own copy of the log before each split checkpoint, which the reference reader folds.
        const scratch = join(root, 'prefix', 'events.jsonl');
        mkdirSync(dirname(scratch), { recursive: true });
        for (let index = PLANTED_MESSAGES; index < records.length; ) {
          if (records[index]?.type !== 'checkpoint.part') {
            index++;
            continue;
          }
          split++;
          const { end, parts } = partFailures(records, index, failures);
          writeFileSync(
            scratch,
            records
              .slice(0, index)
              .map((r) => `${JSON.stringify(r)}\n`)
              .join(''),
          );
          const observed = await observeEventLog(scratch);
          const fold = 'fold' in observed ? observed.fold : observed;
          const messages = parts.flatMap((part) => {
            const listed = ((part.payload ?? {}) as Json).messages;
            return Array.isArray(listed) ? listed : [];
          });
          const differs = firstDifference(messages, fold.messages);
          if (differs !== null)
            failures.push(
              `the messages of the split checkpoint from seq ${String(records[index]?.seq)}, in part order, are not those that folding the log before it gives (TJ-EVENT-007): ${messages.length} message(s) against ${fold.messages.length}, message ${differs} begins ${preview(messages[differs])}, not ${preview(fold.messages[differs])}`,
            );
          index = end;
        }
        return failures;
      });
      // TJ-EVENT-028 (split a checkpoint over the limit) is a SHOULD: a writer that splits none has nothing to judge.
      if ('failures' in outcome && outcome.failures.length === 0 && split === 0)
        return {
          skip: `the writers appended no split checkpoint to a log of 18 MiB of messages (TJ-EVENT-028 is a SHOULD): nothing to judge`,
        };
      return outcome;
    },
  );
}
