import type { LockHolder } from '@turnjournal/reader/store-format';

/** Stable codes of the errors the writer raises; a caller branches on `error.code`, never on the message. */
export type WriterErrorCode =
  | 'journal_locked'
  | 'writer_poisoned'
  | 'journal_unlinked'
  | 'journal_fenced'
  | 'write_failed'
  | 'commit_outcome_unknown'
  | 'not_regular_file'
  | 'writer_closed'
  | 'append_cancelled'
  | 'line_too_long'
  | 'invalid_record'
  | 'invalid_option'
  | 'invalid_identifier'
  | 'illegal_transition'
  | 'unknown_turn'
  | 'turn_id_conflict'
  | 'run_ended'
  | 'target_not_empty'
  | 'source_changed'
  | 'foreign_lock_unavailable';

/** Base class of every error the writer raises on purpose. */
export class WriterError extends Error {
  /** Stable machine-readable code. */
  readonly code: WriterErrorCode;
  /** The file concerned, when there is one. */
  readonly file: string | undefined;
  /**
   * Failures of the clean-up after this error (closing a file the failed open had opened, removing a temporary file),
   * when there were any: the error is what the call failed with, these are kept so that nothing is dropped.
   */
  suppressed?: unknown[];

  constructor(code: WriterErrorCode, message: string, file?: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'WriterError';
    this.code = code;
    this.file = file;
  }
}

/**
 * Another live writer (in this process or another), or a holder that cannot be proved dead, holds the file's lock
 * (TJ-DUR-018). Code `journal_locked`.
 */
export class JournalLockedError extends WriterError {
  /** The holder as recorded in the lock file, or undefined when the lock file could not be read. */
  readonly holder: LockHolder | undefined;

  constructor(file: string, holder: LockHolder | undefined, why: string) {
    const who = holder === undefined ? 'an unknown holder' : `pid ${holder.pid} on ${holder.host}`;
    super('journal_locked', `${file} is locked by ${who}: ${why}`, file);
    this.name = 'JournalLockedError';
    this.holder = holder;
  }
}

/**
 * A file-system call failed while writing (ENOSPC, EIO, …): names the file, the operation and the cause (TJ-DUR-022).
 * Code `write_failed`, or `not_regular_file` when the path is a symbolic link or a FIFO, socket or device (TJ-DUR-031).
 */
export class JournalWriteError extends WriterError {
  /** The operation that failed (`write`, `fdatasync`, `rename`, …). */
  readonly operation: string;
  /** The errno code of the cause (`ENOSPC`, `EIO`, …), when it has one. */
  readonly errno: string | undefined;

  constructor(file: string, operation: string, cause: unknown) {
    const errno = (cause as NodeJS.ErrnoException | undefined)?.code;
    const detail = cause instanceof Error ? cause.message : String(cause);
    // A symbolic link (ELOOP under O_NOFOLLOW) or a FIFO, socket or device (EFTYPE) where a journal, lock or state
    // file belongs is refused before anything is read or written (TJ-DUR-031): its own code, since no retry helps.
    const code = errno === 'ELOOP' || errno === 'EFTYPE' ? 'not_regular_file' : 'write_failed';
    super(code, `${operation} failed on ${file}: ${detail}`, file, { cause });
    this.name = 'JournalWriteError';
    this.operation = operation;
    this.errno = typeof errno === 'string' ? errno : undefined;
  }
}

/**
 * The writer refuses appends because a sync failed earlier (the kernel may have dropped unsynced pages, TJ-DUR-021)
 * or a failed write could not be undone (TJ-DUR-023). Reopen the journal: the open repairs it.
 */
export class WriterPoisonedError extends WriterError {
  constructor(file: string, cause: unknown) {
    super(
      'writer_poisoned',
      `${file}: the writer refuses appends after an earlier failure (${cause instanceof Error ? cause.message : String(cause)}); close and reopen it`,
      file,
      { cause },
    );
    this.name = 'WriterPoisonedError';
  }
}

/**
 * An append that was queued behind a failed write and was therefore not written (TJ-DUR-030): its record was built
 * against a state that assumed the failed record would be in the file (a reserved seq, a turn that was never
 * written). Nothing of it is in the file; the writer re-reads its state from the file before it prepares another
 * append, so a retry is checked against what the file holds. Code `append_cancelled`; `cause` is the failed write.
 */
export class AppendCancelledError extends WriterError {
  constructor(file: string, cause: unknown) {
    super(
      'append_cancelled',
      `${file}: not written, because an append queued before it failed (${cause instanceof Error ? cause.message : String(cause)}); retry it`,
      file,
      { cause },
    );
    this.name = 'AppendCancelledError';
  }
}

/**
 * The journal was removed while its writer held it open (every name of the file is gone, `nlink` 0: an operator's
 * `rm -rf` of the session directory, a cleanup script): the records just written and synced are in no file a reader
 * can find, so the appends that sync covered are refused, not acknowledged, and the writer is poisoned (TJ-DUR-036).
 * Reopen the journal: the open creates it afresh. Code `journal_unlinked`.
 */
/**
 * The journal's lock is no longer this writer's (TJ-DUR-040): another writer took it over (this one's lease expired
 * while it was paused or stalled) or the lock file was removed. The records of the sync that found it are not
 * acknowledged, and every later append is refused. Code `journal_fenced`.
 */
export function journalFencedError(file: string, lockFile: string): WriterError {
  return new WriterError(
    'journal_fenced',
    `${file}: this writer no longer holds ${lockFile} (another writer took it over, or it was removed): the records just written are not acknowledged and the journal refuses appends until it is reopened (TJ-DUR-040)`,
    file,
  );
}

export function journalUnlinkedError(file: string): WriterError {
  return new WriterError(
    'journal_unlinked',
    `${file} was removed while open (no name leads to it any more): the records just written are in no file a reader can find, so they are not acknowledged; reopen the journal to create it again (TJ-DUR-036)`,
    file,
  );
}
