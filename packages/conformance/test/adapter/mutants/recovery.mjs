// Defects of feature `recovery` (adapter.md §5.5) for the mutation matrix: a small hand-written startup recovery,
// correct except for the one rule each defect names, as an implementation in another language could get it wrong.
import { appendFileSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { referenceImplementation } from '@turnjournal/conformance';
import { AppendFile } from '@turnjournal/writer/file-system';
import { heldByLiveProcess, records } from './shared.mjs';

const RANK = { submitted: 0, worker_started: 1, assistant_started: 2, completed: 3, interrupted: 3 };

/** The interrupted records (or, for a defect, other records) recovery appends to one journal. */
function closingRecords(existing, sessionId, broken) {
  const terminal = broken === 'recover-twice' ? new Set(['completed']) : new Set(['completed', 'interrupted']);
  const turns = new Map();
  for (const r of existing) {
    if (typeof r.turn_id !== 'string') continue;
    const t = turns.get(r.turn_id) ?? { rank: -1, closed: false, streamId: undefined };
    t.rank = Math.max(t.rank, RANK[r.event] ?? -1);
    if (terminal.has(r.event)) t.closed = true;
    if (r.event === 'submitted' && typeof r.stream_id === 'string') t.streamId = r.stream_id;
    turns.set(r.turn_id, t);
  }
  const out = [];
  for (const [turnId, t] of [...turns].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (t.closed || t.rank < 0) continue;
    const base = { version: 1, turn_id: turnId, session_id: sessionId, created_at: Date.now() / 1000 };
    if (broken === 'recover-completes')
      out.push({ ...base, event: 'completed' }); // TJ-RECOV-004
    else
      out.push({
        ...base,
        event: 'interrupted',
        reason: broken === 'recover-wrong-reason' ? 'error' : 'server_startup_recovery', // TJ-RECOV-006
        ...(t.streamId === undefined ? {} : { stream_id: t.streamId }),
      });
  }
  return out;
}

/** A hand-written `recover`; `broken` names the one rule it breaks. */
function recoverer(broken) {
  return async (root) => {
    const recovered = [];
    const dir = join(root, '_turn_journal');
    for (const name of existsSync(dir) ? readdirSync(dir).sort() : []) {
      if (!name.endsWith('.jsonl')) continue;
      const file = join(dir, name);
      const sessionId = name.slice(0, -'.jsonl'.length).split('~')[0];
      const held = heldByLiveProcess(`${file}.lock`);
      if (held && broken !== 'recover-ignores-locks') continue; // TJ-RECOV-013
      if (held || broken === 'recover-no-repair') {
        // Appending without the writer's open: no lock taken, no torn tail cut off (TJ-RECOV-010, TJ-RECOV-013).
        for (const record of closingRecords(records(file), sessionId, broken)) {
          appendFileSync(file, `${JSON.stringify(record)}\n`);
          recovered.push({ sessionId, turnId: record.turn_id });
        }
        continue;
      }
      const appendFile = await AppendFile.open(file, { durability: 'every' });
      try {
        for (const record of closingRecords(records(file), sessionId, broken)) {
          // TJ-RECOV-007: the defect writes beside the writer (lock held, tail repaired) and never syncs the record.
          if (broken === 'recover-unsynced') appendFileSync(file, `${JSON.stringify(record)}\n`);
          else await appendFile.appendRecord(record);
          recovered.push({ sessionId, turnId: record.turn_id });
        }
      } finally {
        await appendFile.close();
      }
    }
    if (broken === 'recover-ends-runs') {
      // TJ-RECOV-012: a run without run.end is to be derived as incomplete, never closed by recovery.
      const runs = join(root, 'sessions', '2026', '01', '01');
      for (const name of existsSync(runs) ? readdirSync(runs) : []) {
        const file = join(runs, name);
        if (!records(file).some((r) => r.type === 'run.end'))
          appendFileSync(
            file,
            `${JSON.stringify({ type: 'run.end', run_id: name.slice(0, -6), ts: new Date().toISOString(), outcome: 'interrupted' })}\n`,
          );
      }
    }
    return recovered;
  };
}

/** The defects, by name: overrides of the reference implementation. */
export const recoveryDefects = Object.fromEntries([
  ...[
    'recover-wrong-reason',
    'recover-completes',
    'recover-twice',
    'recover-no-repair',
    'recover-ignores-locks',
    'recover-ends-runs',
    'recover-unsynced',
  ].map((name) => [name, { recover: recoverer(name) }]),
  // TJ-CONF-033: recovers as the reference does, but answers that it closed nothing.
  [
    'recover-silent',
    {
      recover: async (root) => {
        await referenceImplementation.recover(root);
        return [];
      },
    },
  ],
  // Not a defect: the hand-written recovery with nothing broken, which must pass (the defects' control).
  ['recovery-handwritten', { recover: recoverer(null) }],
]);
