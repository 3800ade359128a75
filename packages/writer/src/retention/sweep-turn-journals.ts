import { basename, join } from 'node:path';
import { auditStore, discoverStore, type HostView, type StoreAudit, type StoreCheck } from '@turnjournal/reader';
import { auditStoreListing, recordStoreContents } from '@turnjournal/reader/_internals';
import type { RecordStore } from '@turnjournal/reader/record-store';
import type { Finding } from '@turnjournal/schema';
import { AppendFile } from '../append/append-file.js';
import { JournalWriteError, WriterError } from '../errors.js';
import { isTemporaryOf, removeStaleTemporaries } from '../fs/durable-ops.js';
import { type FileSystem, nodeFileSystem } from '../fs/file-system.js';
import { acquireLock } from '../fs/lock.js';
import { journalEnd } from '../seam/journal-end.js';
import {
  NOTHING_TO_PRUNE,
  newestCreatedAt,
  pruneSession,
  type SessionJournals,
  type SweptSession,
} from './prune-session.js';
import { DEFAULT_RETENTION_SECONDS } from './retention-window.js';

export type { SweptSession } from './prune-session.js';

/** The directory lock of a retention sweep (spec §4.5, TJ-RET-010). */
export const SWEEP_LOCK_NAME = '.turnjournal-sweep.lock';

/** Options of {@link sweepTurnJournals}. */
export interface SweepOptions {
  /** Retention window in seconds; 48 hours by default (TJ-RET-001). */
  readonly retentionSeconds?: number;
  /** Wall clock in epoch milliseconds; by default a record store's own clock when it has one, else `Date.now`. */
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
  /** The file-system layer of a directory's sweep; the real one by default. Not used with a record store. */
  readonly fs?: FileSystem;
}

/** The result of {@link sweepTurnJournals}. */
export interface SweepReport {
  /** The directory swept, or the record store's name. */
  readonly dir: string;
  /** Per session, in session id order. */
  readonly sessions: readonly SweptSession[];
  /** True for a dry run. */
  readonly dryRun: boolean;
}

/**
 * The retention sweep of turn journals (spec §14.1): of a turn journal directory, or of a record store's turn
 * journals (spec §19). It audits them and, for each session whose audit is clean (no `error` or `warn` finding,
 * TJ-RET-002), removes the turns that are terminal, delivered and older than the window (TJ-RET-003, TJ-RET-004):
 * it owns every journal of the session (a live writer makes it skip the session, TJ-RET-008, TJ-RET-009), checks that
 * none changed since the audit, and rewrites each one that holds a pruned turn atomically, retained lines byte for
 * byte and in order, ending with a `compacted` record that lists every pruned turn (TJ-RET-005..007). Lines of turns
 * an earlier, interrupted sweep already listed as removed (remnants, §10.2) are dropped too. A crash at any point
 * leaves each journal either old or new, and a rerun ends the same.
 *
 * A directory's sweep holds the directory lock `.turnjournal-sweep.lock` (TJ-RET-010) and tells a change by a file's
 * size, inode and change time. A store's sweep has no store-wide lock: owning every journal of a session serialises
 * it with writers and other sweeps, and a journal whose end moved since the audit is a change (TJ-STORE-011).
 */
export async function sweepTurnJournals(
  source: string | RecordStore,
  options: SweepOptions = {},
): Promise<SweepReport> {
  if (typeof source !== 'string') return sweepRecordStore(source, options);
  const dir = source;
  const fs = options.fs ?? nodeFileSystem;
  const dirLock = await acquireLock(fs, join(dir, SWEEP_LOCK_NAME), dir);
  try {
    const before = await statFiles(fs, journalFilesOf(dir));
    const audit = await auditStore([dir], options.host === undefined ? {} : { host: options.host });
    const names = await listDirectory(fs, dir);
    await removeStaleTakeoverTemporaries(fs, dir, names);
    const journals: SessionJournals = {
      open: (file) => AppendFile.open(file, { durability: 'every', fs }),
      async changedSinceAudit(journal) {
        const was = before.get(journal.name);
        const now = await fs.stat(journal.name);
        // The change time too: an append into pre-allocated space (spec §3.8) leaves the length as it was.
        if (was === undefined || was.size !== now.size || was.ino !== now.ino || was.ctimeMs !== now.ctimeMs)
          return 'its size, inode or change time moved';
        return journal.opened.tornTail === null ? undefined : 'a torn tail was repaired';
      },
      beforeRewrite: (journal) => removeStaleTemporaries(fs, journal.name),
    };
    // A session with nothing to prune is left alone (its writers are not locked out) unless a crashed sweep left a
    // temporary file beside one of its journals; remnant lines such a sweep may leave are harmless (§10.2 ignores
    // them) and go with the session's next pruning.
    const leftovers = (files: readonly string[]) => files.some((file) => hasTemporary(names, file));
    return { dir, sessions: await sweepSessions(audit, journals, leftovers, options), dryRun: options.dryRun ?? false };
  } finally {
    await dirLock.release();
  }
}

/** The sweep of a record store's turn journals (see {@link sweepTurnJournals}). */
async function sweepRecordStore(store: RecordStore, given: SweepOptions): Promise<SweepReport> {
  // Ages on a shared store are measured by the store's clock when it has one (TJ-STORE-026).
  const clock = given.clock ?? store.clock;
  const options = clock === undefined ? given : { ...given, clock };
  const contents = recordStoreContents(store, { family: 'turn' });
  const before = new Map<string, number>();
  for await (const entry of store.list({ family: 'turn' })) {
    const end = await journalEnd(store, entry.location);
    if (end !== undefined) before.set(entry.name, end);
  }
  const audit = await auditStoreListing(contents, options.host === undefined ? {} : { host: options.host }, false);
  const journals: SessionJournals = {
    open: (name) => {
      const location = contents.locationOf(name);
      if (location === undefined) throw new WriterError('invalid_option', `${name} is not a journal the store listed`);
      return store.openJournal(location, { durability: 'every' });
    },
    async changedSinceAudit(journal) {
      const reader = journal.reader();
      const end = await reader.end().finally(() => reader.close());
      if (end !== before.get(journal.name)) return 'its end moved';
      return journal.opened.tornTail === null ? undefined : 'a torn tail was repaired';
    },
    beforeRewrite: async () => undefined,
  };
  const sessions = await sweepSessions(audit, journals, () => false, options);
  return { dir: store.name, sessions, dryRun: options.dryRun ?? false };
}

/**
 * Decides, session by session, what the audit lets the sweep prune, and prunes it through `journals`. A session
 * with nothing to prune is left alone unless `leftovers` says a crashed sweep left something beside its journals.
 */
async function sweepSessions(
  audit: StoreAudit,
  journals: SessionJournals,
  leftovers: (files: readonly string[]) => boolean,
  options: SweepOptions,
): Promise<SweptSession[]> {
  const cutoff = (options.clock ?? Date.now)() / 1000 - (options.retentionSeconds ?? DEFAULT_RETENTION_SECONDS);
  const delivered = options.isDelivered ?? (() => true);
  const sessions: SweptSession[] = [];
  for (const session of audit.check.sessions) {
    const skip = (skipped: string): SweptSession => ({
      sessionId: session.sessionId,
      prunedTurnIds: [],
      rewrittenFiles: [],
      skipped,
    });
    const unclean = blockingFindings(audit.check, session.sessionId, session.files);
    if (unclean.length > 0) {
      sessions.push(skip(`the audit is not clean (${[...new Set(unclean.map((f) => f.code))].join(', ')})`));
      continue;
    }
    const prunedIds = session.turns
      .filter((turn) => turn.terminal && newestCreatedAt(turn) < cutoff && delivered(session.sessionId, turn.turnId))
      .map((turn) => turn.turnId);
    if (options.dryRun ?? false) {
      sessions.push(
        prunedIds.length === 0
          ? skip(NOTHING_TO_PRUNE)
          : { sessionId: session.sessionId, prunedTurnIds: prunedIds, rewrittenFiles: [] },
      );
      continue;
    }
    if (prunedIds.length === 0 && !leftovers(session.files)) {
      sessions.push(skip(NOTHING_TO_PRUNE));
      continue;
    }
    sessions.push(await pruneSession(session.sessionId, session.files, prunedIds, journals, options));
  }
  return sessions;
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

function hasTemporary(names: readonly string[], file: string): boolean {
  return names.some((name) => isTemporaryOf(name, basename(file)));
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
