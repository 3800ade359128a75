import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bytesOf, parseRecords } from './answers.js';
import { answerCode, type WriterContext, withAdapter } from './context.js';
import { inFreshStore } from './lifecycle.js';

// `writer/turn-unreadable-shard`: a writer that cannot read one of the session's other shards does not know whether
// that shard holds the turn it is asked to submit, so it fails the call rather than write a retry again (TJ-TURN-017).

const SESSION = 's1';
const turnJournalOf = (root: string) => join(root, '_turn_journal', `${SESSION}.jsonl`);

/**
 * `writer/turn-unreadable-shard` (TJ-TURN-017, TJ-TURN-012): the session's other shard `s1~linked.jsonl` is a symbolic
 * link to a file, outside the journal directory, that holds the submission of turn t1. A writer opens a shard without
 * following a link (TJ-DUR-031), so to it the shard cannot be read (ELOOP), which is no sign of its being gone; a
 * submission of t1 with the same content must then fail, writing nothing. A writer that read the shard through the
 * link knows t1 and answers it as a retry (`created: false`), writing nothing too. Only a writer that took the shard
 * for empty writes t1 a second time (TJ-TURN-003), which is what this check fails.
 */
export async function unreadableShardCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/turn-unreadable-shard',
    'a submission whose turn may be in a shard the writer cannot read fails, writing nothing, and never writes the turn again',
    'writer',
    ['TJ-TURN-017', 'TJ-TURN-012'],
    () =>
      inFreshStore(context, 'turn', turnJournalOf, (root, file) =>
        withAdapter(context, async (process) => {
          const failures: string[] = [];
          const elsewhere = join(root, 'elsewhere');
          mkdirSync(elsewhere);
          const target = join(elsewhere, 'shard.jsonl');
          const submitted = { version: 1, event: 'submitted', turn_id: 't1', session_id: SESSION };
          writeFileSync(target, `${JSON.stringify({ ...submitted, created_at: 1, role: 'user', content: 'hi' })}\n`);
          symlinkSync(target, join(root, '_turn_journal', `${SESSION}~linked.jsonl`));
          const request = process.request('turn_submit', { root, session_id: SESSION, turn_id: 't1', content: 'hi' });
          const code = await answerCode(request);
          const answer = code === 'ok' ? ((await request) as { created?: unknown }) : undefined;
          const written = parseRecords(bytesOf(file), failures);
          const created = answer?.created;
          if (written.length > 0 || created === true)
            failures.push(
              `turn_submit of t1, which the shard s1~linked.jsonl holds, answered ${code === 'ok' ? JSON.stringify(answer) : code} and the journal holds ${JSON.stringify(written.map((r) => `${String(r.event)} ${String(r.turn_id)}`))}: a shard the writer cannot read (a link it does not follow) may hold the turn, so the call must fail, writing nothing, not take the shard for empty (TJ-TURN-017, TJ-TURN-003)`,
            );
          return failures;
        }),
      ),
  );
}
