import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { AdapterRequestError, referenceImplementation } from '@turnjournal/conformance';
import { isValidIdentifier } from '@turnjournal/reader/store-format';
import { openTurnJournal, WriterError } from '@turnjournal/writer';
import { AppendFile, nodeFileSystem } from '@turnjournal/writer/file-system';
import { records } from './shared.mjs';

const RANK = { submitted: 0, worker_started: 1, assistant_started: 2, completed: 3, interrupted: 3 };

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
        // TJ-TURN-012: a retry is recognised in any shard of the session (read through a link: a read cannot write).
        const shards = readdirSync(join(root, '_turn_journal'))
          .filter((name) => name.startsWith(`${sessionId}~`) && name.endsWith('.jsonl'))
          .flatMap((name) => records(join(root, '_turn_journal', name)));
        const earlier = [...existing, ...shards].find((r) => r.event === 'submitted' && r.turn_id === turnId);
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
    runStep: referenceImplementation.lifecycle.runStep,
    stateWrite: referenceImplementation.lifecycle.stateWrite,
  };
}

const OUTCOME = { 'chat.done': 'done', 'chat.error': 'error', 'chat.cancelled': 'cancelled' };
/** A checkpoint after every this many records (TJ-EVENT-006). */
const CHECKPOINT_EVERY = 50;

/** Applies one run record to a run index (spec §6.2); `broken` may leave acks out (TJ-EVENT-019). */
function applyRun(runs, record, broken) {
  const id = record.payload?.request_id;
  if (record.type === 'chat.started' && !runs.has(id))
    runs.set(id, {
      request_id: id,
      started_seq: record.seq,
      started_ts: record.ts,
      outcome: null,
      finished_seq: null,
      finished_ts: null,
      acked: false,
      acked_by: [],
    });
  const run = runs.get(id);
  if (run === undefined) return;
  if (OUTCOME[record.type] !== undefined && run.outcome === null)
    Object.assign(run, { outcome: OUTCOME[record.type], finished_seq: record.seq, finished_ts: record.ts });
  if (record.type === 'delivery.ack' && broken !== 'checkpoint-runs-no-acks') {
    run.acked = true;
    const client = record.payload?.client_id;
    if (typeof client === 'string' && !run.acked_by.includes(client)) run.acked_by.push(client);
  }
}

/**
 * The runs a writer opening the log knows: the last checkpoint's run index with the run records after it applied, or
 * every record's when that checkpoint has no usable index (TJ-EVENT-020). Each defect gets one half wrong.
 */
function knownRuns(existing, broken) {
  const at = existing.findLastIndex((r) => r.type === 'checkpoint');
  const index = at < 0 ? undefined : existing[at].payload?.runs;
  const runs = new Map();
  if (!Array.isArray(index) && broken !== 'event-index-trusted') {
    for (const record of existing) applyRun(runs, record, null);
    return runs;
  }
  for (const run of Array.isArray(index) ? index : []) runs.set(run.request_id, structuredClone(run));
  if (broken === 'event-index-final') return runs;
  for (const record of existing.slice(at + 1)) applyRun(runs, record, null);
  return runs;
}

/** The message list of folding `records` (spec §15.1); `broken` may forget `undo` (TJ-EVENT-007). */
function foldMessages(records, broken) {
  let messages = [];
  for (const { type, payload } of records) {
    if (type === 'message_append') messages.push(payload.message);
    else if (type === 'message_edit')
      messages = Array.isArray(payload.messages)
        ? [...payload.messages]
        : messages.with(payload.index, payload.message);
    else if (type === 'undo' && broken !== 'checkpoint-ignores-undo')
      messages = messages.slice(0, Math.max(0, messages.length - (payload?.n ?? 1)));
    else if (type === 'checkpoint') messages = [...payload.messages];
  }
  return messages;
}

/**
 * The epoch of a log (spec §6.7): the last one a record carries, none again after a checkpoint (or a split checkpoint's
 * last part) that carries none; a value that is not a string of 1 to 128 characters is no epoch.
 */
function epochOf(records) {
  let epoch = null;
  for (const r of records) {
    const closes =
      r.type === 'checkpoint' || (r.type === 'checkpoint.part' && r.payload?.part === r.payload?.parts - 1);
    if (typeof r.epoch === 'string' && r.epoch.length >= 1 && r.epoch.length <= 128) epoch = r.epoch;
    else if (closes) epoch = null;
  }
  return epoch;
}

/** The epoch member of a checkpoint the writer appends to a log of `epoch`; `broken` drops or renews it (TJ-EVENT-024). */
function checkpointEpoch(epoch, broken) {
  if (broken === 'checkpoint-epoch-dropped') return {};
  if (broken === 'checkpoint-epoch-renewed') return { epoch: randomUUID() };
  return epoch === null ? {} : { epoch };
}

/** The line-size limit the writer shares with its readers (TJ-DUR-028: the default). */
const LINE_LIMIT = 16 * 1024 * 1024;
/** The most bytes of messages a part of a split checkpoint holds, unless one message is longer. */
const PART_MESSAGE_BYTES = 4 * 1024 * 1024;

/**
 * The records of a checkpoint at `seq`: one `checkpoint`, or, when its line would be over LINE_LIMIT, a split
 * checkpoint (TJ-EVENT-028, TJ-EVENT-030) whose parts hold the messages in order and whose last part alone carries the
 * run index and the epoch. `broken` writes the parts in reverse order, leaves one out, or puts the run index and the
 * epoch on every part (TJ-EVENT-030).
 */
function checkpointRecords(seq, messages, runs, epoch, broken) {
  const ts = new Date().toISOString();
  const whole = { seq, ts, type: 'checkpoint', payload: { messages, runs }, ...checkpointEpoch(epoch, broken) };
  if (Buffer.byteLength(JSON.stringify(whole)) <= LINE_LIMIT) return [whole];
  const groups = [[]];
  let bytes = 0;
  for (const message of messages) {
    const size = Buffer.byteLength(JSON.stringify(message)) + 1;
    if (groups.at(-1).length > 0 && bytes + size > PART_MESSAGE_BYTES) {
      groups.push([]);
      bytes = 0;
    }
    groups.at(-1).push(message);
    bytes += size;
  }
  if (groups.length === 1) groups.unshift([]);
  let parts = groups.map((group, part) => {
    const carries = part === groups.length - 1 || broken === 'split-members-on-every-part';
    return {
      seq: seq + part,
      ts,
      type: 'checkpoint.part',
      payload: { part, parts: groups.length, messages: group, ...(carries ? { runs } : {}) },
      ...(carries ? checkpointEpoch(epoch, broken) : {}),
    };
  });
  if (broken === 'split-parts-reversed') parts = parts.reverse();
  if (broken === 'split-part-missing') parts = parts.filter((_, index) => index !== 1);
  // The seqs stay consecutive whatever the defect: each breaks one thing only.
  return parts.map((part, index) => ({ ...part, seq: seq + index }));
}

/** An event-log writer; `broken` names the one rule it skips. */
function eventWriter(broken) {
  let counter = 0;
  return {
    turnSubmit: referenceImplementation.lifecycle.turnSubmit,
    turnEvent: referenceImplementation.lifecycle.turnEvent,
    runStep: referenceImplementation.lifecycle.runStep,
    stateWrite: referenceImplementation.lifecycle.stateWrite,
    async eventAppend({ file: path, type, payload }) {
      return withFile(path, async (file, existing) => {
        // The defect leaves records of extension types (`x.<org>.<name>`, spec §9.2) out, as if their seqs did not count.
        const counted =
          broken === 'event-seq-skips-extensions' ? existing.filter((r) => !/^x\./.test(r.type)) : existing;
        const seqs = counted.map((r) => r.seq).filter((s) => Number.isInteger(s));
        // TJ-EVENT-003/004: one more than the last accepted seq; one defect counts from 0 in every process instead, the
        // other counts the records it read (right on every log that starts at seq 0, wrong on a compacted one).
        const seq =
          broken === 'event-seq-restarts'
            ? counter++
            : broken === 'event-seq-from-count'
              ? existing.length
              : seqs.length === 0
                ? 0
                : Math.max(...seqs) + 1;
        if (type === 'chat.started') {
          const runs = [...knownRuns(existing, broken).values()];
          const active = runs.length > 0 && runs.at(-1).outcome === null;
          if (active && broken !== 'event-concurrent-runs') throw new AdapterRequestError('refused', 'a run is active'); // TJ-EVENT-009
          if (runs.some((r) => r.request_id === payload.request_id) && broken !== 'event-request-id-reuse')
            throw new AdapterRequestError('refused', `request ${payload.request_id} already started`); // TJ-EVENT-010
        }
        // TJ-EVENT-021: an ack through a record not yet written (this one's seq or later) is refused.
        if (type === 'delivery.ack' && payload.through_seq >= seq && broken !== 'event-ack-beyond-log')
          throw new AdapterRequestError('refused', `through_seq ${payload.through_seq} is not below seq ${seq}`);
        // TJ-EVENT-023: the first record of a new log carries the epoch chosen for it.
        const epoch = existing.length === 0 ? randomUUID() : epochOf(existing);
        const record = { seq, ts: new Date().toISOString(), type, payload };
        await file.appendRecord(existing.length === 0 ? { ...record, epoch } : record);
        // TJ-EVENT-006: a checkpoint after every CHECKPOINT_EVERY records, holding the fold and the run index.
        if ((seq + 1) % CHECKPOINT_EVERY === 0) {
          const all = [...existing, record];
          const runs = new Map();
          for (const r of all) applyRun(runs, r, broken);
          const messages = foldMessages(all, broken);
          for (const line of checkpointRecords(seq + 1, messages, [...runs.values()], epoch, broken))
            await file.appendRecord(line);
        }
        return { seq };
      });
    },
  };
}

/** A run-file writer (spec §7, §16); `broken` names the one rule it skips. */
function runWriter(broken) {
  return {
    ...referenceImplementation.lifecycle,
    async runStep({ file: path, runId, startedAt, step, input, event, seq, output, outcome }) {
      return withFile(path, async (file, existing) => {
        // TJ-RUN-003/004: a header first in a new file, and never again.
        const header = (existing.length === 0 && broken !== 'run-no-header') || broken === 'run-header-repeated';
        if (header)
          await file.appendRecord({ type: 'header', schema_version: 1, run_id: runId, started_at: startedAt });
        const base = { run_id: runId, ts: new Date().toISOString() };
        const seqsOf = (type) => existing.filter((r) => r.type === type).map((r) => r.seq);
        switch (step) {
          case 'start':
            await file.appendRecord({ type: 'run.start', ...base, input });
            return {};
          case 'agent_event': {
            // TJ-RUNSEM-010: from 0, increasing across reopens; the defect counts from 0 in every process.
            const seqs = seqsOf('agent.event');
            const next = broken === 'run-agent-seq-restarts' || seqs.length === 0 ? 0 : Math.max(...seqs) + 1;
            await file.appendRecord({ type: 'agent.event', ...base, seq: next, event });
            return { seq: next };
          }
          case 'llm_request': {
            const seqs = seqsOf('llm.request');
            const next = seqs.length === 0 ? 1 : Math.max(...seqs) + 1;
            await file.appendRecord({ type: 'llm.request', ...base, seq: next, input });
            return { seq: next };
          }
          case 'llm_response': {
            const answered = seqsOf('llm.response');
            if (!seqsOf('llm.request').includes(seq) || answered.includes(seq))
              throw new AdapterRequestError('refused', `no open llm.request with seq ${seq}`);
            // TJ-RUNSEM-011: the response carries its request's seq; the defect numbers responses on their own.
            const written = broken === 'run-response-own-seq' ? answered.length + 1 : seq;
            await file.appendRecord({ type: 'llm.response', ...base, seq: written, output });
            return {};
          }
          default:
            await file.appendRecord({ type: 'run.end', ...base, outcome });
            return {};
        }
      });
    },
  };
}

/** A state-document writer (spec §8); `broken` names the one rule it skips. */
function stateWriter(broken) {
  return {
    ...referenceImplementation.lifecycle,
    async stateWrite({ root, sessionId, messages }) {
      const path = join(root, 'sessions', 'state', `${sessionId}.json`);
      makeDirectory(dirname(path), null);
      const text = JSON.stringify({
        schema_version: 1,
        session_id: sessionId,
        updated_at: new Date().toISOString(),
        messages,
      });
      // TJ-STATE-005: the defect overwrites the document in place, where a reader or a crash can meet half of it.
      const target = broken === 'state-in-place' ? path : `${path}.${process.pid}.tmp`;
      const fd = openSync(target, 'w');
      try {
        writeSync(fd, text);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      if (target !== path) renameSync(target, path);
      const dir = openSync(dirname(path), 'r');
      try {
        fsyncSync(dir);
      } finally {
        closeSync(dir);
      }
    },
  };
}

/**
 * The reference file system, except that a file it fails to open for reading for any reason counts as gone (ENOENT):
 * the session's other shards that cannot be read are taken for empty (TJ-TURN-017).
 */
const unreadableAsGone = {
  ...nodeFileSystem,
  async open(path, mode) {
    try {
      return await nodeFileSystem.open(path, mode);
    } catch (error) {
      if (mode !== 'read' || error?.code === 'ENOENT') throw error;
      throw Object.assign(new Error(`ENOENT: ${path} taken as gone (${error?.code})`), { code: 'ENOENT', path });
    }
  },
};

/** The reference turn writer on {@link unreadableAsGone}: a shard it cannot read is one it skips (TJ-TURN-017). */
function unreadableShardSkipped() {
  return {
    ...referenceImplementation.lifecycle,
    async turnSubmit({ root, sessionId, turnId, content }) {
      const journal = await openTurnJournal({ dir: join(root, '_turn_journal'), sessionId, fs: unreadableAsGone });
      try {
        return { created: (await journal.submit({ turnId, content })).created };
      } catch (error) {
        // Other content for a known turn is a refusal by TJ-TURN-003, answered as the reference answers it.
        if (error instanceof WriterError && error.code === 'turn_id_conflict')
          throw new AdapterRequestError('refused', error.message);
        throw error;
      } finally {
        await journal.close();
      }
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
    runStep: wrap(reference.runStep),
    stateWrite: wrap(reference.stateWrite),
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
  ...[
    'event-seq-restarts',
    'event-seq-from-count',
    'event-seq-skips-extensions',
    'event-concurrent-runs',
    'event-request-id-reuse',
    'event-ack-beyond-log',
    'event-index-final',
    'event-index-trusted',
    'checkpoint-ignores-undo',
    'checkpoint-runs-no-acks',
    'checkpoint-epoch-dropped',
    'checkpoint-epoch-renewed',
    'split-parts-reversed',
    'split-part-missing',
    'split-members-on-every-part',
  ].map((name) => [name, { lifecycle: eventWriter(name) }]),
  ...['run-no-header', 'run-header-repeated', 'run-agent-seq-restarts', 'run-response-own-seq'].map((name) => [
    name,
    { lifecycle: runWriter(name) },
  ]),
  ['state-in-place', { lifecycle: stateWriter('state-in-place') }],
  ['refusal-as-failure', { lifecycle: refusalAsFailure() }],
  ['turn-unreadable-shard-skipped', { lifecycle: unreadableShardSkipped() }],
  // Not a defect: the hand-written writers with nothing skipped, which must pass (the defects' control).
  [
    'lifecycle-handwritten',
    {
      lifecycle: {
        ...turnWriter(null),
        eventAppend: eventWriter(null).eventAppend,
        runStep: runWriter(null).runStep,
        stateWrite: stateWriter(null).stateWrite,
      },
    },
  ],
]);
