import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { freshDir } from '../fresh-dir.js';
import type { Outcome } from '../record.js';
import { snapshotTree, treeChanges } from '../tree-snapshot.js';
import { expectOk, expectRefused, recordsOf } from './answers.js';
import { answerCode, type WriterContext, withAdapter } from './context.js';
import { journalAccess } from './journal-access.js';
import { claimsFeature } from './support.js';

const SESSION = 's1';

/**
 * Runs one lifecycle check in a fresh store whose journal is `fileOf(root)`, created with its directory: skipped when
 * the adapter does not claim feature `lifecycle` or `family`. `body` returns the failures.
 */
export async function inFreshStore(
  context: WriterContext,
  family: 'turn' | 'event' | 'run',
  fileOf: (root: string) => string,
  body: (root: string, file: string) => Promise<string[]>,
): Promise<Outcome> {
  if (!claimsFeature(context.claims, 'lifecycle')) return { skip: 'feature lifecycle not claimed' };
  if (!context.claims.families.includes(family)) return { skip: `family ${family} not claimed` };
  const root = freshDir('tj-conf-lifecycle-');
  const file = fileOf(root);
  mkdirSync(dirname(file), { recursive: true });
  try {
    return { failures: await body(root, file) };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const turnJournalOf = (root: string) => join(root, '_turn_journal', `${SESSION}.jsonl`);
export const eventLogOf = (root: string): string => join(root, SESSION, 'events.jsonl');

/**
 * The checks of feature `lifecycle` (adapter.md §5.4): what a writer decides, seen through its answers and the file.
 * Each lifecycle request opens the session's writer and closes it again, so every step after the first also shows what
 * the writer learns from the file when it opens (TJ-EVENT-004, TJ-EVENT-017, and TJ-TURN-012 across restarts).
 */
export async function lifecycleChecks(context: WriterContext): Promise<void> {
  const { recorder } = context;

  await recorder.record(
    'writer/turn-submit-invalid-session',
    'a turn_submit whose session id is not a valid identifier is answered bad_request and creates no file',
    'writer',
    ['TJ-FAM-010'],
    () =>
      inFreshStore(context, 'turn', turnJournalOf, (root) =>
        withAdapter(context, async (process) => {
          const failures: string[] = [];
          const before = snapshotTree(root);
          // A traversal, a separator, a dot-dot, a space and the shard separator (spec §4.3).
          for (const sessionId of ['../escape', 'a/b', '..', 'a b', 's1~x']) {
            const params = { root, session_id: sessionId, turn_id: 't1', content: 'hi' };
            const code = await answerCode(process.request('turn_submit', params));
            if (code !== 'bad_request')
              failures.push(`session id ${JSON.stringify(sessionId)}: answered ${code}, not bad_request`);
          }
          // ../escape would land beside the store's _turn_journal directory, inside the root: one look covers all.
          for (const change of treeChanges(before, snapshotTree(root))) failures.push(`the store changed: ${change}`);
          return failures;
        }),
      ),
  );

  await recorder.record(
    'writer/turn-submit-idempotent',
    'a resubmission with the same turn id and content writes nothing; with other content it is refused',
    'writer',
    ['TJ-TURN-012', 'TJ-TURN-003', 'TJ-CONF-032'],
    () =>
      inFreshStore(context, 'turn', turnJournalOf, (root, file) =>
        withAdapter(context, async (process) => {
          const failures: string[] = [];
          const journal = journalAccess(context, process);
          const submit = (content: string) => ({ root, session_id: SESSION, turn_id: 't1', content });
          const first = await expectOk(process, 'turn_submit', submit('hello'), 'the first submission', failures);
          if (first !== null && first.created !== true) failures.push('the first submission answered created: false');
          const before = await journal.bytes(file);
          const retry = await expectOk(process, 'turn_submit', submit('hello'), 'a retry of it', failures);
          if (retry !== null && retry.created !== false) failures.push('a retry answered created: true');
          if (!(await journal.bytes(file)).equals(before))
            failures.push('a retry with the same content wrote to the journal');
          const conflict = submit('something else');
          await expectRefused(
            process,
            journal.source(file),
            'turn_submit',
            conflict,
            'the same turn id with other content',
            failures,
          );
          const submitted = (await journal.records(file, failures)).filter(
            (r) => r.event === 'submitted' && r.turn_id === 't1',
          );
          if (submitted.length !== 1)
            failures.push(`the journal holds ${submitted.length} submitted records of t1, not 1`);
          return failures;
        }),
      ),
  );

  await recorder.record(
    'writer/turn-transitions',
    'a repeated or backward step, and any step after a terminal event, is refused and writes nothing',
    'writer',
    ['TJ-TURN-014', 'TJ-CONF-032'],
    () =>
      inFreshStore(context, 'turn', turnJournalOf, (root, file) =>
        withAdapter(context, async (process) => {
          const failures: string[] = [];
          const journal = journalAccess(context, process);
          const step = (event: string) => ({ root, session_id: SESSION, turn_id: 't1', event });
          const refused = (params: Record<string, unknown>, why: string) =>
            expectRefused(process, journal.source(file), 'turn_event', params, why, failures);
          const submit = { root, session_id: SESSION, turn_id: 't1', content: 'hi' };
          await expectOk(process, 'turn_submit', submit, 'submit', failures);
          await expectOk(process, 'turn_event', step('worker_started'), 'worker_started', failures);
          await refused(step('worker_started'), 'a repeated worker_started');
          await expectOk(process, 'turn_event', step('assistant_started'), 'assistant_started', failures);
          await refused(step('worker_started'), 'worker_started after assistant_started');
          await expectOk(process, 'turn_event', step('completed'), 'completed', failures);
          await refused(step('completed'), 'a second completed');
          await refused({ ...step('interrupted'), reason: 'error' }, 'interrupted after completed');
          const events = (await journal.records(file, failures)).map((r) => r.event);
          const expected = ['submitted', 'worker_started', 'assistant_started', 'completed'];
          if (JSON.stringify(events) !== JSON.stringify(expected))
            failures.push(`the journal holds ${JSON.stringify(events)}, not ${JSON.stringify(expected)}`);
          return failures;
        }),
      ),
  );

  await recorder.record(
    'writer/event-seq',
    'the writer gives consecutive seqs from 0, and a new process continues from the last accepted record after a torn tail',
    'writer',
    ['TJ-EVENT-003', 'TJ-EVENT-004', 'TJ-CONF-032'],
    () =>
      inFreshStore(context, 'event', eventLogOf, async (_root, file) => {
        const failures: string[] = [];
        const message = (n: number) => ({
          file,
          type: 'message_append',
          payload: { message: { role: 'user', content: `m${n}` } },
        });
        const seqs: unknown[] = [];
        await withAdapter(context, async (process) => {
          for (let n = 0; n < 3; n += 1)
            seqs.push((await expectOk(process, 'event_append', message(n), `append ${n}`, failures))?.seq);
        });
        // A crash mid-append, then a new process: its writer must repair the torn tail and go on from the last
        // accepted seq, which only the file can tell it.
        writeFileSync(file, '{"seq":3,"ts":"2026-01-01T00:00:00Z","type":"message_app', { flag: 'a' });
        await withAdapter(context, async (process) => {
          seqs.push((await expectOk(process, 'event_append', message(3), 'append after a torn tail', failures))?.seq);
        });
        if (JSON.stringify(seqs) !== '[0,1,2,3]')
          failures.push(`the appends were given seqs ${JSON.stringify(seqs)}, not [0,1,2,3]`);
        const inFile = recordsOf(file, failures).map((r) => r.seq);
        if (JSON.stringify(inFile) !== '[0,1,2,3]')
          failures.push(`the file holds seqs ${JSON.stringify(inFile)}, not [0,1,2,3]`);
        return failures;
      }),
  );

  await recorder.record(
    'writer/event-runs',
    'a chat.started is refused while a run is active, and for a request id the log already holds, also after a reopen; a delivery.ack through a record not yet written is refused',
    'writer',
    ['TJ-EVENT-009', 'TJ-EVENT-010', 'TJ-EVENT-017', 'TJ-EVENT-021', 'TJ-CONF-032'],
    () =>
      inFreshStore(context, 'event', eventLogOf, (_root, file) =>
        withAdapter(context, async (process) => {
          const failures: string[] = [];
          const journal = journalAccess(context, process);
          const record = (type: string, requestId: string) => ({ file, type, payload: { request_id: requestId } });
          const refused = (params: Record<string, unknown>, why: string) =>
            expectRefused(process, journal.source(file), 'event_append', params, why, failures);
          await expectOk(process, 'event_append', record('chat.started', 'r1'), 'chat.started r1', failures);
          await refused(record('chat.started', 'r2'), 'chat.started r2 while r1 is active');
          await expectOk(process, 'event_append', record('chat.done', 'r1'), 'chat.done r1', failures);
          // The ack would be seq 2: no client can have received seq 2 before it was written (TJ-EVENT-021).
          const ack = (through: number) => ({
            file,
            type: 'delivery.ack',
            payload: { request_id: 'r1', through_seq: through },
          });
          await refused(ack(2), 'a delivery.ack of r1 through seq 2, its own seq');
          await expectOk(
            process,
            'event_append',
            ack(1),
            'a delivery.ack of r1 through seq 1, its finishing record',
            failures,
          );
          await refused(record('chat.started', 'r1'), 'chat.started r1 again');
          await expectOk(process, 'event_append', record('chat.started', 'r2'), 'chat.started r2 after r1', failures);
          const started = (await journal.records(file, failures)).filter((r) => r.type === 'chat.started').length;
          if (started !== 2) failures.push(`the journal holds ${started} chat.started records, not 2`);
          return failures;
        }),
      ),
  );
}
