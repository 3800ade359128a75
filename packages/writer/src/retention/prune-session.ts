import type { DerivedTurn, JournalRecord } from '@turnjournal/reader';
import type { WritableJournal } from '@turnjournal/reader/record-store';
import { encodeRecord } from '../append/encode-record.js';
import { requireValidRecord } from '../append/require-valid.js';
import { DEFAULT_RETENTION_SECONDS } from './retention-window.js';

// ES2024 String method, which Node 20 has but the ES2023 library types do not declare.
type WellFormed = string & { toWellFormed(): string };

/** A turn id as derivation keys it: as a UTF-8 round trip leaves it, a lone surrogate as U+FFFD. */
function derivedId(id: string): string {
  return (id as WellFormed).toWellFormed();
}

/** What a sweep did with one session. */
export interface SweptSession {
  /** The session. */
  readonly sessionId: string;
  /** Turns removed (or, in a dry run, that would be). */
  readonly prunedTurnIds: readonly string[];
  /** Journals rewritten, by name (a file's path, a store's name for it). */
  readonly rewrittenFiles: readonly string[];
  /** Why nothing was pruned, when nothing was. */
  readonly skipped?: string;
}

/** How a sweep reaches the journals of one session: files under its directory lock, or a record store's journals. */
export interface SessionJournals {
  /** Opens the journal named `name` as its owner; fails with code `journal_locked` while a live writer holds it. */
  open(name: string): Promise<WritableJournal>;
  /** Why the journal, now owned, is not what the audit read (something was appended or repaired since), or undefined. */
  changedSinceAudit(journal: WritableJournal): Promise<string | undefined>;
  /** Called just before the journal is rewritten (the file binding removes a crashed sweep's temporaries). */
  beforeRewrite(journal: WritableJournal): Promise<void>;
}

/** The settings of the `compacted` record a pruning ends each rewritten journal with. */
export interface PruneSettings {
  /** Wall clock in epoch milliseconds. */
  readonly clock?: () => number;
  /** The retention window the record states. */
  readonly retentionSeconds?: number;
}

/** The reason a session is left alone when it has nothing to prune. */
export const NOTHING_TO_PRUNE = 'no turn is terminal, delivered and older than the window';

/**
 * Prunes `prunedIds` from the journals of one session (spec §14.1): owns every journal of the session (a live writer
 * makes it skip the session, TJ-RET-008, TJ-RET-009), checks that none changed since the audit, and rewrites each one
 * that holds a pruned turn atomically (TJ-STORE-006), retained lines byte for byte and in order, ending with a
 * `compacted` record that lists every pruned turn (TJ-RET-005..007). Lines of turns an earlier, interrupted sweep
 * already listed as removed (remnants, §10.2) are dropped too.
 */
export async function pruneSession(
  sessionId: string,
  names: readonly string[],
  prunedIds: readonly string[],
  journals: SessionJournals,
  settings: PruneSettings,
): Promise<SweptSession> {
  const opened: WritableJournal[] = [];
  const skip = (skipped: string): SweptSession => ({ sessionId, prunedTurnIds: [], rewrittenFiles: [], skipped });
  let failed = false;
  try {
    for (const name of names) {
      try {
        opened.push(await journals.open(name));
      } catch (error) {
        if (codeOf(error) === 'journal_locked') return skip(`a live writer holds ${name}`);
        throw error;
      }
    }
    for (const journal of opened) {
      const why = await journals.changedSinceAudit(journal);
      if (why !== undefined)
        return skip(`${journal.name} changed during the sweep (${why}); the next sweep will see it`);
    }
    // The turns whose lines go: those this sweep prunes, and remnants of those an earlier sweep removed (TJ-RET-016).
    // Never "every turn not derived": a line the derivation did not take in stays (TJ-RET-017).
    const dropped = new Set(prunedIds);
    for (const journal of opened) for (const id of await removedEarlier(journal)) dropped.add(id);
    const compacted: Record<string, unknown> = {
      version: 1,
      event: 'compacted',
      created_at: (settings.clock ?? Date.now)() / 1000,
      session_id: sessionId,
      removed_turns: prunedIds.length,
      removed_turn_ids: [...prunedIds],
      retention_seconds: settings.retentionSeconds ?? DEFAULT_RETENTION_SECONDS,
    };
    requireValidRecord(compacted, 'compacted');
    const compactedLine = encodeRecord(compacted);
    const rewritten: string[] = [];
    for (const journal of opened) {
      await journals.beforeRewrite(journal);
      const drop = await linesToDrop(journal, dropped);
      if (drop.length === 0) continue;
      await journal.rewrite(withoutLines(journal, drop, compactedLine));
      rewritten.push(journal.name);
    }
    if (rewritten.length === 0) return skip(NOTHING_TO_PRUNE);
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

/** The stable code of an error: a writer's, or a record store backend's own error class (spec §19 codes). */
function codeOf(error: unknown): string | undefined {
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Closes every journal the sweep opened, each even when an earlier one fails. A failed close can leave the journal's
 * owner lock behind, which keeps its writers out: it fails the sweep rather than pass unseen.
 */
async function closeAll(opened: readonly WritableJournal[]): Promise<void> {
  const failures: unknown[] = [];
  for (const journal of opened) await journal.close().catch((error: unknown) => failures.push(error));
  if (failures.length === 1) throw failures[0];
  if (failures.length > 1) throw new AggregateError(failures, `${failures.length} files of the sweep failed to close`);
}

/** Every valid turn record of the journal, in order, read through its owner. */
async function* turnRecords(journal: WritableJournal): AsyncGenerator<JournalRecord> {
  const reader = journal.reader();
  try {
    for await (const batch of reader.records()) {
      for (const item of batch) {
        if (item.kind !== 'record') continue;
        const { validation } = item.record;
        if (validation.status === 'valid' && validation.classification.family === 'turn') yield item.record;
      }
    }
  } finally {
    await reader.close();
  }
}

/** The turn ids the `compacted` records of the journal list as removed. */
async function removedEarlier(journal: WritableJournal): Promise<string[]> {
  const ids: string[] = [];
  for await (const { value } of turnRecords(journal)) {
    if (value.event !== 'compacted' || !Array.isArray(value.removed_turn_ids)) continue;
    for (const id of value.removed_turn_ids) if (typeof id === 'string') ids.push(derivedId(id));
  }
  return ids;
}

/**
 * Cursors of the lines to remove: the valid turn records (other than `compacted`) of the turns in `dropped`. Every
 * other line, valid or not, is kept byte for byte.
 */
async function linesToDrop(journal: WritableJournal, dropped: ReadonlySet<string>): Promise<number[]> {
  const cursors: number[] = [];
  for await (const { value, offset } of turnRecords(journal)) {
    if (value.event === 'compacted') continue;
    // Ids as the derivation keys turns (lone surrogates as U+FFFD, see derivedId): the ids in `dropped` come from it.
    if (typeof value.turn_id === 'string' && dropped.has(derivedId(value.turn_id))) cursors.push(offset);
  }
  return cursors;
}

/** The journal's lines without those starting at `drop` (ascending cursors), then `tail`. */
async function* withoutLines(
  journal: WritableJournal,
  drop: readonly number[],
  tail: Uint8Array,
): AsyncGenerator<Uint8Array> {
  const chunkBytes = 1024 * 1024;
  const reader = journal.reader();
  try {
    const size = await reader.end();
    let next = 0;
    let skipping = false;
    for (let position = 0; position < size; ) {
      const buffer = new Uint8Array(Math.min(chunkBytes, size - position));
      const read = await reader.read(buffer, 0, buffer.length, position);
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
  } finally {
    await reader.close();
  }
  yield tail;
}

/** The newest `created_at` of a turn's records; a record without a usable time counts as new. */
export function newestCreatedAt(turn: DerivedTurn): number {
  let newest = Number.NEGATIVE_INFINITY;
  for (const record of Object.values(turn.events)) {
    const at = record?.summary.createdAt;
    // A record without a usable time counts as new: retention never prunes what it cannot date.
    if (typeof at !== 'number' || !Number.isFinite(at)) return Number.POSITIVE_INFINITY;
    newest = Math.max(newest, at);
  }
  return newest;
}
