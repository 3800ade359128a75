import { basename, join } from 'node:path';
import {
  auditStore,
  type DerivedTurn,
  discoverStore,
  type HostView,
  type JournalRecord,
  readJournal,
  type StoreCheck,
} from '@turnjournal/reader';
import type { Finding } from '@turnjournal/schema';
import { AppendFile } from '../append/append-file.js';
import { encodeRecord } from '../append/encode-record.js';
import { requireValidRecord } from '../append/require-valid.js';

// ES2024 String method, which Node 20 has but the ES2023 library types do not declare.
type WellFormed = string & { toWellFormed(): string };

/** A turn id as derivation keys it: as a UTF-8 round trip leaves it, a lone surrogate as U+FFFD. */
function derivedId(id: string): string {
  return (id as WellFormed).toWellFormed();
}

import { JournalLockedError, JournalWriteError } from '../errors.js';
import { isTemporaryOf, removeStaleTemporaries } from '../fs/durable-ops.js';
import { type FileSystem, nodeFileSystem } from '../fs/file-system.js';
import { acquireLock } from '../fs/lock.js';
import { DEFAULT_RETENTION_SECONDS } from './retention-window.js';

/** The directory lock of a retention sweep (spec §4.5, TJ-RET-010). */
export const SWEEP_LOCK_NAME = '.turnjournal-sweep.lock';

/** Options of {@link sweepTurnJournals}. */
export interface SweepOptions {
  /** Retention window in seconds; 48 hours by default (TJ-RET-001). */
  readonly retentionSeconds?: number;
  /** Wall clock in epoch milliseconds; `Date.now` by default. */
  readonly clock?: () => number;
  /**
   * Whether the host delivered a terminal turn to its client (seed 001). Without it every terminal turn counts as
   * delivered, as spec §14.1 says for hosts without delivery tracking.
   */
  readonly isDelivered?: (sessionId: string, turnId: string) => boolean;
  /** What the host transcript holds, for the audit (interruption markers). */
  readonly host?: HostView;
  /** True to report what would be pruned without rewriting anything. */
  readonly dryRun?: boolean;
  /** The file-system layer; the real one by default. */
  readonly fs?: FileSystem;
}

/** What a sweep did with one session. */
export interface SweptSession {
  /** The session. */
  readonly sessionId: string;
  /** Turns removed (or, in a dry run, that would be). */
  readonly prunedTurnIds: readonly string[];
  /** Files rewritten. */
  readonly rewrittenFiles: readonly string[];
  /** Why nothing was pruned, when nothing was. */
  readonly skipped?: string;
}

/** The result of {@link sweepTurnJournals}. */
export interface SweepReport {
  /** The directory swept. */
  readonly dir: string;
  /** Per session, in session id order. */
  readonly sessions: readonly SweptSession[];
  /** True for a dry run. */
  readonly dryRun: boolean;
}

/**
 * The retention sweep of a turn journal directory (spec §14.1). Holding the directory lock `.turnjournal-sweep.lock`
 * (TJ-RET-010), it audits the directory and, for each session whose audit is clean (no `error` or `warn` finding,
 * TJ-RET-002), removes the turns that are terminal, delivered and older than the window (TJ-RET-003, TJ-RET-004):
 * it takes the writer lock of every file of the session (a live writer makes it skip the session, TJ-RET-008,
 * TJ-RET-009), checks that no file changed since the audit, and rewrites each file that holds a pruned turn
 * atomically, retained lines byte for byte and in order, ending with a `compacted` record that lists every pruned
 * turn (TJ-RET-005..007). Lines of turns an earlier, interrupted sweep already listed as removed (remnants, §10.2)
 * are dropped too. A crash at any point leaves each file either old or new, and a rerun ends the same.
 */
export async function sweepTurnJournals(dir: string, options: SweepOptions = {}): Promise<SweepReport> {
  const fs = options.fs ?? nodeFileSystem;
  const dryRun = options.dryRun ?? false;
  const dirLock = await acquireLock(fs, join(dir, SWEEP_LOCK_NAME), dir);
  try {
    const before = await statFiles(fs, journalFilesOf(dir));
    const audit = await auditStore([dir], options.host === undefined ? {} : { host: options.host });
    const names = await listDirectory(fs, dir);
    await removeStaleTakeoverTemporaries(fs, dir, names);
    const cutoff = (options.clock ?? Date.now)() / 1000 - (options.retentionSeconds ?? DEFAULT_RETENTION_SECONDS);
    const sessions: SweptSession[] = [];
    for (const session of audit.check.sessions) {
      const skip = (skipped: string, prunedTurnIds: readonly string[] = []): SweptSession => ({
        sessionId: session.sessionId,
        prunedTurnIds,
        rewrittenFiles: [],
        skipped,
      });
      const unclean = blockingFindings(audit.check, session.sessionId, session.files);
      if (unclean.length > 0) {
        sessions.push(skip(`the audit is not clean (${[...new Set(unclean.map((f) => f.code))].join(', ')})`));
        continue;
      }
      const delivered = options.isDelivered ?? (() => true);
      const pruned = session.turns.filter(
        (turn) => turn.terminal && newestCreatedAt(turn) < cutoff && delivered(session.sessionId, turn.turnId),
      );
      const prunedIds = pruned.map((turn) => turn.turnId);
      if (dryRun) {
        sessions.push(
          prunedIds.length === 0
            ? skip('no turn is terminal, delivered and older than the window')
            : { sessionId: session.sessionId, prunedTurnIds: prunedIds, rewrittenFiles: [] },
        );
        continue;
      }
      // A session with nothing to prune is left alone (its writers are not locked out) unless a crashed sweep left a
      // temporary file beside one of its journals; remnant lines such a sweep may leave are harmless (§10.2 ignores
      // them) and go with the session's next pruning.
      if (prunedIds.length === 0 && !session.files.some((file) => hasTemporary(names, file))) {
        sessions.push(skip('no turn is terminal, delivered and older than the window'));
        continue;
      }
      sessions.push(await pruneSession(fs, session.sessionId, session.files, prunedIds, before, options));
    }
    return { dir, sessions, dryRun };
  } finally {
    await dirLock.release();
  }
}

async function pruneSession(
  fs: FileSystem,
  sessionId: string,
  files: readonly string[],
  prunedIds: readonly string[],
  before: ReadonlyMap<string, FileIdentity>,
  options: SweepOptions,
): Promise<SweptSession> {
  const opened: AppendFile[] = [];
  const skip = (skipped: string): SweptSession => ({ sessionId, prunedTurnIds: [], rewrittenFiles: [], skipped });
  let failed = false;
  try {
    for (const file of files) {
      try {
        opened.push(await AppendFile.open(file, { durability: 'every', fs }));
      } catch (error) {
        if (error instanceof JournalLockedError) return skip(`a live writer holds ${file}`);
        throw error;
      }
    }
    for (const file of opened) {
      const was = before.get(file.path);
      const now = await fs.stat(file.path);
      // The change time too: an append into pre-allocated space (spec §3.8) leaves the length as it was.
      const changed = was === undefined || was.size !== now.size || was.ino !== now.ino || was.ctimeMs !== now.ctimeMs;
      if (changed || file.opened.tornTail !== null)
        return skip(`${file.path} changed during the sweep; the next sweep will see it`);
    }
    // The turns whose lines go: those this sweep prunes, and remnants of those an earlier sweep removed (TJ-RET-016).
    // Never "every turn not derived": a line the derivation did not take in stays (TJ-RET-017).
    const dropped = new Set(prunedIds);
    for (const file of opened) for (const id of await removedEarlier(file)) dropped.add(id);
    const compacted: Record<string, unknown> = {
      version: 1,
      event: 'compacted',
      created_at: (options.clock ?? Date.now)() / 1000,
      session_id: sessionId,
      removed_turns: prunedIds.length,
      removed_turn_ids: [...prunedIds],
      retention_seconds: options.retentionSeconds ?? DEFAULT_RETENTION_SECONDS,
    };
    requireValidRecord(compacted, 'compacted');
    const compactedLine = encodeRecord(compacted);
    const rewritten: string[] = [];
    for (const file of opened) {
      await removeStaleTemporaries(fs, file.path);
      const drop = await linesToDrop(file, dropped);
      if (drop.length === 0) continue;
      await file.rewrite(withoutLines(file, drop, compactedLine));
      rewritten.push(file.path);
    }
    if (rewritten.length === 0) return skip('no turn is terminal, delivered and older than the window');
    return { sessionId, prunedTurnIds: prunedIds, rewrittenFiles: rewritten };
  } catch (error) {
    failed = true;
    const closing = await closeAll(opened).then(
      () => undefined,
      (closeError: unknown) => closeError,
    );
    if (closing === undefined) throw error;
    throw new AggregateError(
      [error, closing],
      `the sweep of session ${sessionId} failed, and so did closing its files`,
    );
  } finally {
    if (!failed) await closeAll(opened);
  }
}

/**
 * Closes every file the sweep opened, each even when an earlier one fails. A failed close can leave the file's writer
 * lock behind, which keeps its writers out: it fails the sweep rather than pass unseen.
 */
async function closeAll(opened: readonly AppendFile[]): Promise<void> {
  const failures: unknown[] = [];
  for (const file of opened) await file.close().catch((error: unknown) => failures.push(error));
  if (failures.length === 1) throw failures[0];
  if (failures.length > 1) throw new AggregateError(failures, `${failures.length} files of the sweep failed to close`);
}

/** The names in `dir`. The directory is the sweep's own (it holds its lock): a listing that fails fails the sweep. */
async function listDirectory(fs: FileSystem, dir: string): Promise<string[]> {
  try {
    return await fs.readdir(dir);
  } catch (error) {
    throw new JournalWriteError(dir, 'readdir', error);
  }
}

/**
 * Removes the temporary files of take-overs of the sweep lock (`..turnjournal-sweep.lock.takeover.<hex>.tmp`) that a
 * sweep killed while taking over a stale lock left behind: nothing else removes them. Under the sweep lock nobody can
 * be taking it over (its holder runs); a racer whose temporary goes fails its link as if the lock existed.
 */
async function removeStaleTakeoverTemporaries(fs: FileSystem, dir: string, names: readonly string[]): Promise<void> {
  for (const name of names) {
    if (!isTemporaryOf(name, `${SWEEP_LOCK_NAME}.takeover`)) continue;
    const path = join(dir, name);
    await fs.unlink(path).catch((error: unknown) => {
      if (errnoOf(error) !== 'ENOENT') throw new JournalWriteError(path, 'unlink', error);
    });
  }
}

function errnoOf(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Every valid turn record of the file, in order. */
async function* turnRecords(file: AppendFile): AsyncGenerator<JournalRecord> {
  for await (const batch of readJournal(file.path, { source: file.source })) {
    for (const item of batch) {
      if (item.kind !== 'record') continue;
      const { validation } = item.record;
      if (validation.status === 'valid' && validation.classification.family === 'turn') yield item.record;
    }
  }
}

/** The turn ids the `compacted` records of the file list as removed. */
async function removedEarlier(file: AppendFile): Promise<string[]> {
  const ids: string[] = [];
  for await (const { value } of turnRecords(file)) {
    if (value.event !== 'compacted' || !Array.isArray(value.removed_turn_ids)) continue;
    for (const id of value.removed_turn_ids) if (typeof id === 'string') ids.push(derivedId(id));
  }
  return ids;
}

/**
 * Offsets of the lines to remove: the valid turn records (other than `compacted`) of the turns in `dropped`. Every
 * other line, valid or not, is kept byte for byte.
 */
async function linesToDrop(file: AppendFile, dropped: ReadonlySet<string>): Promise<number[]> {
  const offsets: number[] = [];
  for await (const { value, offset } of turnRecords(file)) {
    if (value.event === 'compacted') continue;
    // Ids as the derivation keys turns (lone surrogates as U+FFFD, see derivedId): the ids in `dropped` come from it.
    if (typeof value.turn_id === 'string' && dropped.has(derivedId(value.turn_id))) offsets.push(offset);
  }
  return offsets;
}

/** The file's bytes without the lines starting at `drop` (ascending offsets), then `tail`. */
async function* withoutLines(file: AppendFile, drop: readonly number[], tail: Uint8Array): AsyncGenerator<Uint8Array> {
  const chunkBytes = 1024 * 1024;
  const size = file.size;
  let next = 0;
  let skipping = false;
  for (let position = 0; position < size; ) {
    const buffer = new Uint8Array(Math.min(chunkBytes, size - position));
    const read = await file.source.read(buffer, 0, buffer.length, position);
    if (read === 0) break;
    const chunk = buffer.subarray(0, read);
    let at = 0;
    while (at < read) {
      if (skipping) {
        const lf = chunk.indexOf(0x0a, at);
        if (lf < 0) break;
        skipping = false;
        at = lf + 1;
        continue;
      }
      const dropAt = drop[next];
      const end = dropAt !== undefined && dropAt < position + read ? dropAt - position : read;
      if (end > at) yield chunk.slice(at, end);
      at = end;
      if (end < read) {
        next++;
        skipping = true;
      }
    }
    position += read;
  }
  yield tail;
}

function hasTemporary(names: readonly string[], file: string): boolean {
  return names.some((name) => isTemporaryOf(name, basename(file)));
}

function newestCreatedAt(turn: DerivedTurn): number {
  let newest = Number.NEGATIVE_INFINITY;
  for (const record of Object.values(turn.events)) {
    const at = record?.summary.createdAt;
    // A record without a usable time counts as new: retention never prunes what it cannot date.
    if (typeof at !== 'number' || !Number.isFinite(at)) return Number.POSITIVE_INFINITY;
    newest = Math.max(newest, at);
  }
  return newest;
}

/** Findings of severity error or warn that concern the session or one of its files (spec §13.3 "clean"). */
function blockingFindings(check: StoreCheck, sessionId: string, files: readonly string[]): Finding[] {
  const mine = new Set(files);
  return check.findings.filter(
    (finding) =>
      (finding.severity === 'error' || finding.severity === 'warn') &&
      (finding.session_id === sessionId || (finding.file !== undefined && mine.has(finding.file))),
  );
}

function journalFilesOf(dir: string): string[] {
  return discoverStore([dir])
    .files.filter((file) => file.format === 'jsonl')
    .map((file) => file.path);
}

/** What says a journal file changed between the audit and the sweep's lock. */
interface FileIdentity {
  readonly size: number;
  readonly ino: number;
  readonly ctimeMs: number | undefined;
}

async function statFiles(fs: FileSystem, files: readonly string[]): Promise<Map<string, FileIdentity>> {
  const stats = new Map<string, FileIdentity>();
  for (const file of files) {
    try {
      const { size, ino, ctimeMs } = await fs.stat(file);
      stats.set(file, { size, ino, ctimeMs });
    } catch (error) {
      // Gone since the listing (ENOENT, or ENOTDIR for a directory replaced by a file): the session is skipped when
      // it is reached. Any other failure would skip it as "changed" for ever without saying why: it fails the sweep.
      const errno = errnoOf(error);
      if (errno !== 'ENOENT' && errno !== 'ENOTDIR') throw new JournalWriteError(file, 'stat', error);
    }
  }
  return stats;
}
