import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Random } from '../../random.js';
import { expectOk, expectRefused } from './answers.js';
import { type WriterContext, withAdapter } from './context.js';
import { journalAccess } from './journal-access.js';
import { eventLogOf, inFreshStore } from './lifecycle.js';

// A writer of an event log that compaction cut (spec §14.2) starts from a log whose first record is a checkpoint with
// seq N: the seqs below N are gone, and so are the run records the checkpoint's run index stands for. A writer that
// derives the next seq from how many records it read, or the runs from the records alone, is right on every fresh log.

type Json = Record<string, unknown>;
const TS = '2026-06-19T03:14:07Z';

const line = (seq: number, type: string, payload: Json) => `${JSON.stringify({ seq, ts: TS, type, payload })}\n`;

/** A run index entry (spec §6.2). */
function run(requestId: string, startedSeq: number, finishedSeq: number | null, ackedBy: string[]): Json {
  return {
    request_id: requestId,
    started_seq: startedSeq,
    started_ts: TS,
    outcome: finishedSeq === null ? null : 'done',
    finished_seq: finishedSeq,
    finished_ts: finishedSeq === null ? null : TS,
    acked: ackedBy.length > 0,
    acked_by: ackedBy,
  };
}

/** One starting log: the name of its directory and its text. */
interface CompactedLog {
  readonly name: string;
  readonly text: string;
}

/**
 * Two compacted logs beginning at a checkpoint with seq `n`. Run r1 finished and was delivered before it: compaction
 * removed its records (TJ-RET-013 lets it remove only such runs), so only the checkpoint's run index still holds it.
 * After the checkpoint a message and the start of run r2; in the second log an extension record (spec §9.2) follows,
 * whose seq counts like any other (TJ-EVENT-004, §6.5).
 */
function compactedLogs(n: number): CompactedLog[] {
  const checkpoint = line(n, 'checkpoint', {
    messages: [
      { role: 'user', content: 'before compaction' },
      { role: 'assistant', content: 'kept in the checkpoint' },
    ],
    runs: [run('r1', n - 40, n - 30, ['c1'])],
  });
  const body =
    checkpoint +
    line(n + 1, 'message_append', { message: { role: 'user', content: 'after' } }) +
    line(n + 2, 'chat.started', { request_id: 'r2' });
  return [
    { name: 'compacted', text: body },
    { name: 'compacted-extension', text: body + line(n + 3, 'x.acme.note', { text: 'an extension record' }) },
  ];
}

/**
 * `writer/event-compacted-start` (TJ-EVENT-003, TJ-EVENT-004, TJ-EVENT-009, TJ-EVENT-017): a writer opening a compacted
 * log continues its seqs at the last record's seq + 1, extension records included, and keeps the runs of the
 * checkpoint's run index: a request id that only the index holds never starts a run again.
 */
export async function eventCompactedStartCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/event-compacted-start',
    'a writer opening a compacted log that begins at a checkpoint with seq N continues at its last seq + 1 (extension records included) and keeps the runs only its run index holds',
    'writer',
    ['TJ-EVENT-003', 'TJ-EVENT-004', 'TJ-EVENT-009', 'TJ-EVENT-017'],
    () =>
      inFreshStore(context, 'event', eventLogOf, (root) =>
        withAdapter(context, async (process) => {
          const failures: string[] = [];
          const journal = journalAccess(context, process);
          // N well above the few records a log holds, so a seq counted from the records can never hit it by chance.
          const n = new Random(context.seed + 37).int(1_000, 1_000_000);
          for (const log of compactedLogs(n)) {
            const file = join(root, log.name, 'events.jsonl');
            mkdirSync(dirname(file), { recursive: true });
            await journal.plant(file, log.text);
            const what = (step: string) => `${log.name} log from a checkpoint at seq ${n}: ${step}`;
            // Expected: one more than the seq of the file's last record, read before each append (a writer may have
            // added a checkpoint of its own since, TJ-EVENT-006).
            const lastSeq = async () => (await journal.records(file, failures)).at(-1)?.seq as number;
            const append = async (type: string, payload: Json, step: string) => {
              const expected = (await lastSeq()) + 1;
              const result = await expectOk(process, 'event_append', { file, type, payload }, what(step), failures);
              if (result === null) return;
              if (result.seq !== expected)
                failures.push(
                  what(
                    `${step} was given seq ${result.seq}, not ${expected} (the last record's seq + 1, TJ-EVENT-003/004)`,
                  ),
                );
              const written = (await journal.records(file, failures)).find(
                (r) => r.seq === result.seq && r.type === type,
              );
              if (written === undefined)
                failures.push(what(`${step}: the journal holds no ${type} with the answered seq ${result.seq}`));
            };
            const started = (requestId: string) => ({ file, type: 'chat.started', payload: { request_id: requestId } });
            await append('message_append', { message: { role: 'user', content: 'resumed' } }, 'the first append');
            await expectRefused(
              process,
              journal.source(file),
              'event_append',
              started('r3'),
              what('chat.started r3 while r2 has not finished (TJ-EVENT-009)'),
              failures,
            );
            await append('chat.done', { request_id: 'r2' }, 'chat.done r2');
            await expectRefused(
              process,
              journal.source(file),
              'event_append',
              started('r1'),
              what('chat.started r1, a request id only the checkpoint’s run index holds (TJ-EVENT-017)'),
              failures,
            );
            await append('chat.started', { request_id: 'r3' }, 'chat.started r3 after r2 finished');
          }
          return failures;
        }),
      ),
  );
}
