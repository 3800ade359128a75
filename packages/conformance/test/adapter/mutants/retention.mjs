// Defects of feature `retention` (adapter.md §5.6) for the mutation matrix: a small hand-written sweep of turn journals
// and compaction of event logs, correct except for the one rule each defect names, as an implementation in another
// language could get it wrong. It parses lines with JSON.parse and takes locks with exclusive creates, as a simple
// implementation would.
import {
  closeSync,
  fsyncSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { heldByLiveProcess } from './shared.mjs';

const TURN_EVENTS = new Set(['submitted', 'worker_started', 'assistant_started', 'completed', 'interrupted']);
const TERMINAL = new Set(['completed', 'interrupted']);
const FINISHING = new Set(['chat.done', 'chat.error', 'chat.cancelled']);
const DEFAULT_WINDOW_S = 48 * 3600;

/** Takes a lock file (spec §4.5): exclusive create; a stale lock (dead holder on this host) is replaced. */
function takeLock(lockFile) {
  const body = `${JSON.stringify({ pid: process.pid, host: hostname(), token: `sweep-${process.pid}-${Date.now()}` })}\n`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockFile, 'wx');
      writeSync(fd, body);
      fsyncSync(fd);
      closeSync(fd);
      return () => rmSync(lockFile, { force: true });
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      if (heldByLiveProcess(lockFile)) return null;
      rmSync(lockFile, { force: true });
    }
  }
  return null;
}

/** Replaces `file` atomically with `text`: temporary file, fsync, rename, directory fsync (spec §11.2). */
function replaceFile(file, text, broken) {
  const temporary = `${file}.tmp-${process.pid}`;
  const fd = openSync(temporary, 'w');
  writeSync(fd, text);
  if (broken !== 'sweep-unsynced-replace') fsyncSync(fd); // TJ-DUR-009
  closeSync(fd);
  renameSync(temporary, file);
  const dir = openSync(dirname(file), 'r');
  fsyncSync(dir);
  closeSync(dir);
}

/** The lines of a file (without their LF) and each line's record, null when it does not parse. */
function linesOf(file) {
  return readFileSync(file, 'utf8')
    .split('\n')
    .slice(0, -1)
    .map((text) => {
      try {
        return { text, record: JSON.parse(text) };
      } catch {
        return { text, record: null };
      }
    });
}

const isTurnRecord = (record) =>
  record !== null && typeof record === 'object' && TURN_EVENTS.has(record.event) && typeof record.turn_id === 'string';

/** The hand-written sweep of `<root>/_turn_journal`, with `broken` the defect it has (null: none). */
function sweep(broken) {
  return async ({ root, now, windowSeconds }) => {
    const dir = join(root, '_turn_journal');
    // TJ-RET-001: 48 hours by default.
    const window = windowSeconds ?? (broken === 'sweep-default-window' ? 24 * 3600 : DEFAULT_WINDOW_S);
    const cutoff = now / 1000 - window;
    // TJ-RET-010: the directory lock; another sweep holding it makes this one fail.
    const releaseDir = takeLock(join(dir, '.turnjournal-sweep.lock'));
    if (releaseDir === null && broken !== 'sweep-ignores-dir-lock')
      throw new Error('another sweep holds the directory lock');
    try {
      const bySession = new Map();
      for (const name of readdirSync(dir).sort()) {
        const match = /^([^~.]+)(~[^.]+)?\.jsonl$/.exec(name);
        if (match === null) continue;
        bySession.set(match[1], [...(bySession.get(match[1]) ?? []), join(dir, name)]);
      }
      const answer = [];
      for (const [sessionId, files] of bySession) {
        // Size and identity of each file as audited, for TJ-RET-015.
        const parsed = files.map((file) => ({ file, stat: statSync(file), lines: linesOf(file) }));
        const turns = new Map();
        let clean = true;
        for (const { lines } of parsed)
          for (const { record } of lines) {
            if (record === null) clean = false;
            if (!isTurnRecord(record)) continue;
            const turn = turns.get(record.turn_id) ?? { terminal: false, newest: -Infinity, oldest: Infinity };
            if (TERMINAL.has(record.event)) turn.terminal = true;
            turn.newest = Math.max(turn.newest, record.created_at);
            turn.oldest = Math.min(turn.oldest, record.created_at);
            turns.set(record.turn_id, turn);
          }
        // A pending turn is a warn finding: the audit is not clean (spec §13).
        if ([...turns.values()].some((turn) => !turn.terminal)) clean = false;
        // TJ-RET-002: only clean sessions.
        if (!clean && broken !== 'sweep-ignores-audit') continue;
        // TJ-RET-003: eligible when the newest record is older than the window.
        const age = (turn) => (broken === 'sweep-prunes-young' ? turn.oldest : turn.newest);
        const pruned = [...turns]
          .filter(([, turn]) => turn.terminal && age(turn) < cutoff)
          .map(([id]) => id)
          .sort();
        if (pruned.length === 0) continue;
        // TJ-RET-008/009: the writer lock of every file; a live writer makes the sweep skip the session.
        const releases = [];
        let held = false;
        for (const file of files) {
          // sweep-no-writer-lock: looks whether a live writer holds the file (TJ-RET-009) but takes no lock (TJ-RET-008).
          const release =
            broken === 'sweep-ignores-writer-lock'
              ? () => {}
              : broken === 'sweep-no-writer-lock'
                ? heldByLiveProcess(`${file}.lock`)
                  ? null
                  : () => {}
                : takeLock(`${file}.lock`);
          if (release === null) held = true;
          else releases.push(release);
        }
        try {
          if (held) {
            // TJ-CONF-034: the answer names only what was pruned.
            if (broken === 'sweep-answers-held') answer.push({ sessionId, pruned });
            continue;
          }
          // TJ-RET-015: a file that changed since the audit (a writer came and went) makes the sweep skip the session.
          const changed = parsed.some(({ file, stat }) => {
            const current = statSync(file);
            return current.size !== stat.size || current.ino !== stat.ino;
          });
          if (changed && broken !== 'sweep-no-recheck') continue;
          const compacted = {
            version: 1,
            event: 'compacted',
            created_at: now / 1000,
            session_id: sessionId,
            removed_turns: pruned.length,
            removed_turn_ids: pruned,
            retention_seconds: window,
          };
          for (const { file, lines } of parsed) {
            const goes = (record) => {
              // TJ-RET-017: a line that is not a turn record stays.
              if (!isTurnRecord(record)) return broken === 'sweep-drops-unknown' && record !== null;
              if (!pruned.includes(record.turn_id)) return false;
              // TJ-RET-004: every record of a pruned turn goes.
              return broken !== 'sweep-keeps-partial' || TERMINAL.has(record.event);
            };
            if (!lines.some(({ record }) => isTurnRecord(record) && pruned.includes(record.turn_id))) continue;
            // TJ-RET-005: retained lines byte for byte.
            const kept = lines
              .filter(({ record }) => !goes(record))
              .map(({ text, record }) =>
                broken === 'sweep-reformats' && record !== null ? JSON.stringify(record) : text,
              );
            // TJ-RET-007: every turn the sweep prunes from the session, in each file it replaces.
            const ids =
              broken === 'sweep-per-file-ids'
                ? pruned.filter((id) => lines.some(({ record }) => isTurnRecord(record) && record.turn_id === id))
                : pruned;
            // TJ-RET-006: one compacted record at the end.
            const tail =
              broken === 'sweep-no-compacted' ? [] : [JSON.stringify({ ...compacted, removed_turn_ids: ids })];
            replaceFile(file, [...kept, ...tail].map((line) => `${line}\n`).join(''), broken);
          }
          answer.push({ sessionId, pruned });
        } finally {
          for (const release of releases) release();
        }
      }
      return answer;
    } finally {
      releaseDir?.();
    }
  };
}

/** The hand-written compaction of the event log `file`, with `broken` the defect it has (null: none). */
function compact(broken) {
  return async ({ file, now, windowSeconds, deliveryWindowSeconds }) => {
    const releaseLock = takeLock(`${file}.lock`);
    if (releaseLock === null) throw new Error(`a live writer holds ${file}`);
    try {
      const window = broken === 'compact-ignores-window' ? 0 : (windowSeconds ?? DEFAULT_WINDOW_S);
      const deliveryWindow =
        broken === 'compact-never-expires' ? Number.POSITIVE_INFINITY : (deliveryWindowSeconds ?? DEFAULT_WINDOW_S);
      const lines = linesOf(file);
      // TJ-RET-019: a ts more than 5 minutes ahead of now counts as the ts of the first later record that is not (the
      // log is appended in time order), or as now when none follows.
      const timeOf = new Map();
      let later = now;
      for (const { record } of [...lines].reverse()) {
        if (record === null) continue;
        const time = Date.parse(record.ts);
        const ahead = time > now + 5 * 60_000 && broken !== 'compact-trusts-future-ts';
        timeOf.set(record, ahead ? later : time);
        if (!ahead && Number.isFinite(time)) later = time;
      }
      const runs = new Map();
      for (const { record } of lines) {
        const id = record?.payload?.request_id;
        if (typeof id !== 'string') continue;
        const run = runs.get(id) ?? { finishedAt: null, acked: false };
        if (FINISHING.has(record.type) && run.finishedAt === null) run.finishedAt = timeOf.get(record);
        if (record.type === 'delivery.ack') run.acked = true;
        runs.set(id, run);
      }
      // TJ-RET-018: a finished, unacknowledged run expires after the delivery window.
      const expired = [...runs]
        .filter(([, run]) => run.finishedAt !== null && !run.acked && run.finishedAt < now - deliveryWindow * 1000)
        .map(([id]) => id);
      const removable = (record) => {
        if (record === null) return true;
        // TJ-RET-013: nothing younger than the window, nothing of an unfinished or undelivered run.
        if (!(timeOf.get(record) < now - window * 1000)) return false;
        const id = record.payload?.request_id;
        if (typeof id !== 'string') return true;
        const run = runs.get(id);
        if (run.finishedAt === null) return broken === 'compact-ignores-unfinished';
        return run.acked || expired.includes(id);
      };
      // TJ-RET-012: the cut is the latest checkpoint with only removable records before it.
      let cut = 0;
      for (const [index, { record }] of lines.entries()) {
        if (record?.type === 'checkpoint') cut = index;
        if (!removable(record)) break;
      }
      let kept = lines.slice(cut).map(({ text }) => text);
      if (broken === 'compact-drops-checkpoint' && cut > 0) kept = kept.slice(1);
      // TJ-RET-014: seqs stay.
      if (broken === 'compact-renumbers' && cut > 0)
        kept = kept.map((text, index) => text.replace(/^\{"seq":\d+/, `{"seq":${index}`));
      if (broken === 'compact-acks-expired' && expired.length > 0) {
        let seq = JSON.parse(lines.at(-1).text).seq;
        for (const id of expired)
          kept.push(
            JSON.stringify({
              seq: ++seq,
              ts: new Date(now).toISOString(),
              type: 'delivery.ack',
              payload: { request_id: id },
            }),
          );
      }
      if (cut > 0 || broken === 'compact-acks-expired') replaceFile(file, kept.map((line) => `${line}\n`).join(''));
      // TJ-CONF-035: the lines removed and the expired runs.
      const removedRecords = broken === 'compact-miscounts' ? Math.max(0, cut - 1) : cut;
      return { removedRecords, expired };
    } finally {
      releaseLock();
    }
  };
}

const handwritten = (broken) => ({ retention: { sweep: sweep(broken), compact: compact(broken) } });

export const retentionDefects = Object.fromEntries([
  ...[
    'sweep-default-window',
    'sweep-ignores-audit',
    'sweep-prunes-young',
    'sweep-keeps-partial',
    'sweep-reformats',
    'sweep-no-compacted',
    'sweep-per-file-ids',
    'sweep-ignores-writer-lock',
    'sweep-ignores-dir-lock',
    'sweep-drops-unknown',
    'sweep-answers-held',
    'sweep-no-writer-lock',
    'sweep-unsynced-replace',
    'sweep-no-recheck',
    'compact-ignores-window',
    'compact-ignores-unfinished',
    'compact-never-expires',
    'compact-acks-expired',
    'compact-renumbers',
    'compact-drops-checkpoint',
    'compact-miscounts',
    'compact-trusts-future-ts',
  ].map((name) => [name, handwritten(name)]),
  // Not a defect: the hand-written sweep and compaction with nothing broken, which must pass (the defects' control).
  ['retention-handwritten', handwritten(null)],
]);
