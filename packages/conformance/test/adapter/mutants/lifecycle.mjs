import { closeSync, existsSync, fsyncSync, mkdirSync, openSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { AdapterRequestError, referenceImplementation } from '@turnjournal/conformance';
import { isValidIdentifier } from '@turnjournal/reader/store-format';
import { AppendFile } from '@turnjournal/writer/file-system';
import { records } from './shared.mjs';

const RANK = { submitted: 0, worker_started: 1, assistant_started: 2, completed: 3, interrupted: 3 };
const FINISHING = new Set(['chat.done', 'chat.error', 'chat.cancelled']);

async function withFile(file, body) {
  const appendFile = await AppendFile.open(file, { durability: 'every' });
  try {
    return await body(appendFile, records(file));
  } finally {
    await appendFile.close();
  }
}

/** Creates `dir` and its missing parents, fsyncing the parent of each one created (TJ-DUR-008) unless `broken`. */
function makeDirectory(dir, broken) {
  if (broken === 'turn-mkdir-unsynced') {
    mkdirSync(dir, { recursive: true }); // TJ-DUR-008: the new entries are not synced
    return;
  }
  const missing = [];
  for (let d = dir; !existsSync(d); d = dirname(d)) missing.push(d);
  for (const d of missing.reverse()) {
    mkdirSync(d);
    const parent = openSync(dirname(d), 'r');
    try {
      fsyncSync(parent);
    } finally {
      closeSync(parent);
    }
  }
}

/** A turn-journal writer; `broken` names the one rule it skips. */
function turnWriter(broken) {
  const journal = (root, sessionId) => join(root, '_turn_journal', `${sessionId}.jsonl`);
  return {
    async turnSubmit({ root, sessionId, turnId, content }) {
      if (!isValidIdentifier(sessionId) && broken !== 'turn-any-session-id')
        throw new AdapterRequestError('bad_request', `session id ${JSON.stringify(sessionId)} is not an identifier`); // TJ-FAM-010
      makeDirectory(join(root, '_turn_journal'), broken);
      return withFile(journal(root, sessionId), async (file, existing) => {
        const earlier = existing.find((r) => r.event === 'submitted' && r.turn_id === turnId);
        if (earlier !== undefined && earlier.content === content && broken !== 'turn-resubmit-appends')
          return { created: false }; // TJ-TURN-012
        if (earlier !== undefined && earlier.content !== content && broken !== 'turn-conflict-appended')
          throw new AdapterRequestError('refused', `turn ${turnId} was submitted with other content`); // TJ-TURN-003
        const record = { version: 1, event: 'submitted', turn_id: turnId, session_id: sessionId };
        await file.appendRecord({ ...record, created_at: Date.now() / 1000, role: 'user', content });
        return { created: true };
      });
    },
    async turnEvent({ root, sessionId, turnId, event, reason }) {
      await withFile(journal(root, sessionId), async (file, existing) => {
        const ranks = existing.filter((r) => r.turn_id === turnId).map((r) => RANK[r.event] ?? -1);
        const current = ranks.length === 0 ? -1 : Math.max(...ranks);
        const terminal = current === 3;
        if (broken !== 'turn-steps-unchecked' && (terminal || RANK[event] <= current))
          throw new AdapterRequestError('refused', `${event} does not raise the state of ${turnId}`); // TJ-TURN-014
        const record = { version: 1, event, turn_id: turnId, created_at: Date.now() / 1000 };
        await file.appendRecord(event === 'interrupted' ? { ...record, reason: reason ?? 'error' } : record);
      });
    },
    eventAppend: referenceImplementation.lifecycle.eventAppend,
  };
}

/** An event-log writer; `broken` names the one rule it skips. */
function eventWriter(broken) {
  let counter = 0;
  return {
    turnSubmit: referenceImplementation.lifecycle.turnSubmit,
    turnEvent: referenceImplementation.lifecycle.turnEvent,
    async eventAppend({ file: path, type, payload }) {
      return withFile(path, async (file, existing) => {
        const seqs = existing.map((r) => r.seq).filter((s) => Number.isInteger(s));
        // TJ-EVENT-003/004: one more than the last accepted seq; the defect counts from 0 in every process instead.
        const seq = broken === 'event-seq-restarts' ? counter++ : seqs.length === 0 ? 0 : Math.max(...seqs) + 1;
        if (type === 'chat.started') {
          const started = existing.filter((r) => r.type === 'chat.started').map((r) => r.payload?.request_id);
          const finished = new Set(existing.filter((r) => FINISHING.has(r.type)).map((r) => r.payload?.request_id));
          const active = started.length > 0 && !finished.has(started.at(-1));
          if (active && broken !== 'event-concurrent-runs') throw new AdapterRequestError('refused', 'a run is active'); // TJ-EVENT-009
          if (started.includes(payload.request_id) && broken !== 'event-request-id-reuse')
            throw new AdapterRequestError('refused', `request ${payload.request_id} already started`); // TJ-EVENT-010
        }
        await file.appendRecord({ seq, ts: new Date().toISOString(), type, payload });
        return { seq };
      });
    },
  };
}

/** The reference writers, answering a refusal as `failed` instead of `refused` (TJ-CONF-032). */
function refusalAsFailure() {
  const wrap =
    (call) =>
    async (...args) => {
      try {
        return await call(...args);
      } catch (error) {
        if (error instanceof AdapterRequestError && error.code === 'refused')
          throw new AdapterRequestError('failed', error.message);
        throw error;
      }
    };
  const reference = referenceImplementation.lifecycle;
  return {
    turnSubmit: wrap(reference.turnSubmit),
    turnEvent: wrap(reference.turnEvent),
    eventAppend: wrap(reference.eventAppend),
  };
}

/** The defects, by name: overrides of the reference implementation. */
export const lifecycleDefects = Object.fromEntries([
  ...[
    'turn-resubmit-appends',
    'turn-conflict-appended',
    'turn-steps-unchecked',
    'turn-any-session-id',
    'turn-mkdir-unsynced',
  ].map((name) => [name, { lifecycle: turnWriter(name) }]),
  ...['event-seq-restarts', 'event-concurrent-runs', 'event-request-id-reuse'].map((name) => [
    name,
    { lifecycle: eventWriter(name) },
  ]),
  ['refusal-as-failure', { lifecycle: refusalAsFailure() }],
  // Not a defect: the hand-written writers with nothing skipped, which must pass (the defects' control).
  ['lifecycle-handwritten', { lifecycle: { ...turnWriter(null), eventAppend: eventWriter(null).eventAppend } }],
]);
