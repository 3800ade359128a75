import type {
  JournalAppendAck,
  JournalAppendOptions,
  JournalDurability,
  JournalOpenReport,
  JournalReader,
  WritableJournal,
  WritableJournalState,
} from '@turnjournal/reader/record-store';
import { AppendCancelledError, WriterError, WriterPoisonedError } from '@turnjournal/writer';
import type pg from 'pg';
import type { CommitQueue } from './commit-queue.js';
import { isConnectionLoss, reportCleanupFailure } from './connection-errors.js';
import { readCommittedBytes } from './line-rows.js';
import { PostgresJournalReader } from './postgres-journal-reader.js';
import type { StreamKey } from './queryable.js';

/** One append handed over and not committed yet: whole lines, at the cursor and position they will have. */
interface Pending {
  readonly bytes: Uint8Array;
  /** Each line's end within `bytes` (after its LF). */
  readonly ends: readonly number[];
  readonly cursor: number;
  readonly position: number;
  /** True once acknowledged before its commit (`none`): a later failure loses an acknowledged line. */
  acknowledged: boolean;
  resolve(ack: JournalAppendAck): void;
  reject(error: unknown): void;
}

/** What the stream's row says when the journal is opened. */
export interface OpenedStream {
  readonly epoch: number;
  readonly end: number;
  readonly lines: number;
  readonly created: boolean;
}

/** In `none` mode, queued lines are committed once this many bytes wait, without waiting for a flush. */
const NONE_BOUND_BYTES = 1024 * 1024;
/** A commit carries at most about this many bytes (one line more when a single line is larger). */
const BATCH_BYTES = 4 * 1024 * 1024;
/**
 * Pauses before each re-read of a commit whose answer was lost: at once (a pooled connection was cut, a new one
 * works), then after a restart's or a failover's first moments. After the last, the outcome is unknown.
 */
const REREAD_PAUSES_MS = [0, 200, 1000];

/**
 * A journal of a {@link PostgresRecordStore} opened by its one owner: the session-level advisory lock held on
 * `lockClient` says who the owner is (the database frees it when that connection dies), and the epoch this owner
 * bumped at open is checked by every commit (TJ-STORE-008): a paused owner whose lock was lost and whose journal was
 * taken over appends nothing, whatever its lock connection believes.
 */
export class PostgresJournal implements WritableJournal {
  readonly name: string;
  readonly durability: JournalDurability;
  readonly opened: JournalOpenReport;
  readonly #pool: pg.Pool;
  readonly #commits: CommitQueue;
  readonly #lockClient: pg.Client;
  readonly #key: StreamKey;
  /** The fencing token every commit checks: set at open, taken anew by the re-read of a failed commit. */
  #epoch: number;
  readonly #maxLineBytes: number;
  #state: WritableJournalState = 'open';
  /** Why the journal is fenced or poisoned. */
  #cause: unknown = null;
  /** The failed commit, from its failure until `resume` (TJ-DUR-030). */
  #failed: unknown = null;
  #committedEnd: number;
  #committedLines: number;
  /** The cursor and position of the next append: after every pending line. */
  #nextCursor: number;
  #nextPosition: number;
  /** Appends not committed yet, in order; the first `#sending` are in the commit in flight. */
  #pending: Pending[] = [];
  #sending = 0;
  #queuedBytes = 0;
  /** `none`: a commit of everything queued was asked for (a non-held append, idle, flush, close). */
  #commitWanted = false;
  #draining = false;
  /** Set while a rewrite runs: appends wait for it, then take cursors after the new lines. */
  #rewriting: Promise<void> | null = null;
  /** The last rewrite (settled), and how many appends still wait to resume after one. */
  #lastRewrite: Promise<void> = Promise.resolve();
  #waitingForRewrite = 0;
  #idleWaiters: (() => void)[] = [];

  constructor(
    name: string,
    pool: pg.Pool,
    commits: CommitQueue,
    lockClient: pg.Client,
    key: StreamKey,
    stream: OpenedStream,
    options: { readonly durability: JournalDurability; readonly maxLineBytes: number },
  ) {
    this.name = name;
    this.#pool = pool;
    this.#commits = commits;
    this.#lockClient = lockClient;
    this.#key = key;
    this.#epoch = stream.epoch;
    this.durability = options.durability;
    this.#maxLineBytes = options.maxLineBytes;
    this.#committedEnd = this.#nextCursor = stream.end;
    this.#committedLines = this.#nextPosition = stream.lines;
    this.opened = { created: stream.created, tookOverLock: false, tornTail: null };
    // The lock lives as long as this connection: once it is lost another owner may open the journal, so this one
    // stops appending at once rather than at its next commit's epoch check.
    const lost = (error?: unknown) => {
      if (this.#state !== 'open') return;
      this.#fence(error ?? new Error('the lock connection ended'));
    };
    lockClient.on('error', lost);
    lockClient.on('end', () => lost());
  }

  get state(): WritableJournalState {
    return this.#state;
  }

  get poisoned(): boolean {
    return this.#state === 'poisoned';
  }

  get interrupted(): boolean {
    return this.#failed !== null;
  }

  resume(): void {
    this.#failed = null;
  }

  appendLine(line: Uint8Array, options?: JournalAppendOptions): Promise<JournalAppendAck> {
    return this.#append(line, true, options?.hold === true);
  }

  appendLines(lines: Uint8Array, options?: JournalAppendOptions): Promise<JournalAppendAck> {
    return this.#append(lines, false, options?.hold === true);
  }

  async #append(bytes: Uint8Array, single: boolean, hold: boolean): Promise<JournalAppendAck> {
    const ends = this.#lineEnds(bytes, single);
    // Appends made during a rewrite wait for it, in call order: they all wait on the same promise, and an append made
    // once it ended but before they have resumed waits behind them.
    while (this.#rewriting !== null || this.#waitingForRewrite > 0) {
      this.#waitingForRewrite += 1;
      try {
        await (this.#rewriting ?? this.#lastRewrite);
      } finally {
        this.#waitingForRewrite -= 1;
      }
      if (this.#rewriting === null) break;
    }
    const refusal = this.#refusal();
    if (refusal !== null) throw refusal;
    const cursor = this.#nextCursor;
    const ack = { cursor, length: bytes.length };
    const promise = new Promise<JournalAppendAck>((resolve, reject) => {
      const pending: Pending = {
        bytes: Uint8Array.from(bytes),
        ends,
        cursor,
        position: this.#nextPosition,
        acknowledged: false,
        resolve,
        reject,
      };
      this.#pending.push(pending);
      if (this.durability === 'none') {
        pending.acknowledged = true;
        resolve(ack);
      }
    });
    this.#nextCursor += bytes.length;
    this.#nextPosition += ends.length;
    this.#queuedBytes += bytes.length;
    if (this.durability !== 'none' || !hold || this.#queuedBytes >= NONE_BOUND_BYTES) this.#commitWanted = true;
    this.#drain();
    return promise;
  }

  /** Where each line of `bytes` ends; refuses what is not whole LF-terminated lines (one line when `single`). */
  #lineEnds(bytes: Uint8Array, single: boolean): number[] {
    if (!(bytes instanceof Uint8Array) || bytes.length === 0 || bytes[bytes.length - 1] !== 0x0a)
      throw new WriterError('invalid_record', `${this.name}: an appended line must end with LF`, this.name);
    const ends: number[] = [];
    for (let start = 0; start < bytes.length; ) {
      const end = bytes.indexOf(0x0a, start) + 1;
      if (end - start - 1 > this.#maxLineBytes)
        throw new WriterError(
          'line_too_long',
          `${this.name}: a line of ${end - start - 1} bytes exceeds the limit of ${this.#maxLineBytes}`,
          this.name,
        );
      ends.push(end);
      start = end;
    }
    if (single && ends.length !== 1)
      throw new WriterError('invalid_record', `${this.name}: an appended line must contain exactly one LF`, this.name);
    return ends;
  }

  #refusal(): WriterError | null {
    if (this.#state === 'closed') return new WriterError('writer_closed', `${this.name} is closed`, this.name);
    if (this.#state === 'fenced')
      return new WriterError(
        'journal_fenced',
        `${this.name}: another owner took the journal over; this one appends nothing more`,
        this.name,
        { cause: this.#cause },
      );
    if (this.#state === 'poisoned') return new WriterPoisonedError(this.name, this.#cause);
    if (this.#failed !== null) return new AppendCancelledError(this.name, this.#failed);
    return null;
  }

  /** Commits what is due, one transaction at a time, until nothing is. */
  #drain(): void {
    if (this.#draining) return;
    this.#draining = true;
    void (async () => {
      try {
        for (;;) {
          const batch = this.#take();
          if (batch.length === 0) break;
          await this.#commit(batch);
        }
      } catch (error) {
        // A defect of this class, not a database failure (those are settled by #commit): nothing more is appended.
        this.#poison(error);
        this.#settleNotCommitted(this.#pending.slice(0, this.#sending), this.#refusal());
      }
      this.#draining = false;
      if (this.#pending.length === 0 || !this.#commitWanted)
        for (const resolve of this.#idleWaiters.splice(0)) resolve();
    })();
  }

  /** The next commit's appends: one for `every`, all that wait (up to a bound) otherwise; none unless one is due. */
  #take(): Pending[] {
    // During a rewrite, the queue holds only appends made before it: they are committed before its transaction.
    if (this.#state !== 'open') return [];
    if (this.#pending.length === 0 || !this.#commitWanted) return [];
    let count = 0;
    let bytes = 0;
    for (const pending of this.#pending) {
      if (count > 0 && (this.durability === 'every' || bytes + pending.bytes.length > BATCH_BYTES)) break;
      count += 1;
      bytes += pending.bytes.length;
    }
    this.#sending = count;
    return this.#pending.slice(0, count);
  }

  async #commit(batch: Pending[]): Promise<void> {
    const last = batch[batch.length - 1] as Pending;
    const end = last.cursor + last.bytes.length;
    const lines = last.position + last.ends.length;
    const rows = rowsOf(batch);
    let added: number;
    try {
      added = await this.#commits.commit({
        stream: this.#key.stream,
        epoch: this.#epoch,
        fromEnd: this.#committedEnd,
        fromLines: this.#committedLines,
        toEnd: end,
        toLines: lines,
        ...rows,
      });
    } catch (error) {
      // The commit's outcome may be unknown (the connection was lost after COMMIT was sent): the stream's row says.
      await this.#settleFailure(batch, error, end, lines);
      return;
    }
    if (added === rows.positions.length) this.#settleCommitted(batch, end, lines);
    else if (added === 0) await this.#settleRefused(batch);
    else {
      this.#poison(new Error(`${this.name}: a commit added ${added} of ${rows.positions.length} lines`));
      this.#settleNotCommitted(batch, this.#refusal());
    }
  }

  #settleCommitted(batch: Pending[], end: number, lines: number): void {
    this.#committedEnd = end;
    this.#committedLines = lines;
    this.#removeSent(batch);
    for (const pending of batch)
      if (!pending.acknowledged) pending.resolve({ cursor: pending.cursor, length: pending.bytes.length });
    if (this.#pending.length === 0) this.#commitWanted = false;
  }

  /** Takes the commit's appends off the queue (they are its first ones), and refuses those not acknowledged. */
  #settleNotCommitted(batch: Pending[], error: unknown): void {
    this.#removeSent(batch);
    for (const pending of batch) if (!pending.acknowledged) pending.reject(error);
  }

  #removeSent(batch: Pending[]): void {
    if (this.#pending[0] === batch[0]) this.#pending.splice(0, batch.length);
    this.#sending = 0;
    for (const pending of batch) this.#queuedBytes -= pending.bytes.length;
  }

  /** The commit matched no row: another owner bumped the epoch (fenced), or the stream changed under this owner. */
  async #settleRefused(batch: Pending[]): Promise<void> {
    const row = await this.#streamRow().catch((error: unknown) =>
      error instanceof Error ? error : new Error(String(error)),
    );
    if (row instanceof Error || row === undefined || row.epoch !== this.#epoch)
      this.#fence(row instanceof Error ? row : new Error(`the stream's epoch is no longer ${this.#epoch}`));
    else this.#poison(new Error(`the stream ends at ${row.end}, not at ${this.#committedEnd} as its owner wrote it`));
    this.#settleNotCommitted(batch, this.#refusal());
  }

  /**
   * The commit's statement failed: it may have been refused before COMMIT (nothing added), or the connection may have
   * been lost after COMMIT was sent, when only the database knows (TJ-STORE-025). The owner re-reads the journal's row
   * and takes a new epoch in the same statement: a lost commit still running holds that row's lock, so the re-read
   * waits for its end and sees its outcome, and one the server has not started yet checks the old epoch and adds
   * nothing. Whatever the re-read says is then final.
   */
  async #settleFailure(batch: Pending[], error: unknown, end: number, lines: number): Promise<void> {
    const failure = new WriterError('write_failed', `commit failed on ${this.name}: ${messageOf(error)}`, this.name, {
      cause: error,
    });
    const count = lines - this.#committedLines;
    const seen = await this.#reread(batch, lines);
    if (seen instanceof Error) {
      // Nothing more can be appended after lines that may or may not be there, and none of them is refused as if it
      // were not: each caller is told the outcome is unknown, and a reopen re-reads the journal.
      const unknown = new WriterError(
        'commit_outcome_unknown',
        `${this.name}: the commit of ${count} line(s) failed (${messageOf(error)}) and the journal could not be re-read (${messageOf(seen)}): the lines may or may not be in the journal; reopen it to see`,
        this.name,
        { cause: error },
      );
      unknown.suppressed = [seen];
      this.#poison(unknown);
      return this.#settleNotCommitted(batch, unknown);
    }
    if (seen.owner === 'other') {
      // Another owner took the journal over, after this commit ended (its epoch bump waited for the row's lock too).
      if (seen.found) this.#settleCommitted(batch, end, lines);
      this.#fence(new Error(`the stream's epoch is no longer ${this.#epoch}`));
      if (seen.found) return;
      // It may have rewritten the journal since (a compaction moves lines): not finding the batch's last line where
      // it was sent does not prove that it was never committed.
      const unknown = new WriterError(
        'commit_outcome_unknown',
        `${this.name}: the commit of ${count} line(s) failed (${messageOf(error)}) and another owner has taken the journal over since: the lines may or may not be in it`,
        this.name,
        { cause: error },
      );
      return this.#settleNotCommitted(batch, unknown);
    }
    this.#epoch = seen.epoch;
    if (seen.end === end && seen.lines === lines) return this.#settleCommitted(batch, end, lines);
    if (seen.end !== this.#committedEnd || seen.lines !== this.#committedLines) this.#poison(failure);
    // Not committed, and undone already (a transaction): the journal is as before the batch (TJ-DUR-023). An
    // acknowledged `none` line was lost with it: the owner's state is then wrong, and only a reopen re-reads it.
    else if (this.#pending.some((pending) => pending.acknowledged)) this.#poison(failure);
    if (this.#state !== 'open') return this.#settleNotCommitted(batch, failure);
    this.#failed = failure;
    this.#settleNotCommitted(batch, failure);
    this.#refuseAll(new AppendCancelledError(this.name, failure));
    this.#nextCursor = this.#committedEnd;
    this.#nextPosition = this.#committedLines;
  }

  /**
   * Re-reads the journal after a failed commit of `batch` (ending at `lines`): with this owner's epoch still there, it
   * takes the next one and answers where the lines end; with another's, whether the batch's last line is where it was
   * sent. Tried again after a lost connection (a restarting server, a failover); the last failure once every pause
   * has passed.
   */
  async #reread(
    batch: readonly Pending[],
    lines: number,
  ): Promise<
    { owner: 'this'; epoch: number; end: number; lines: number } | { owner: 'other'; found: boolean } | Error
  > {
    const key = [this.#key.store, this.#key.stream];
    const last = batch[batch.length - 1] as Pending;
    const lastStart = last.ends.length > 1 ? (last.ends[last.ends.length - 2] as number) : 0;
    const lastLine = Buffer.from(last.bytes.buffer, last.bytes.byteOffset + lastStart, last.bytes.length - lastStart);
    let failure: Error = new Error('not re-read');
    for (const pause of REREAD_PAUSES_MS) {
      if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause));
      try {
        const bumped = await this.#pool.query<{ epoch: string; end_cursor: string; line_count: string }>(
          `UPDATE turnjournal_streams SET epoch = epoch + 1 WHERE store = $1 AND stream = $2 AND epoch = $3
           RETURNING epoch, end_cursor, line_count`,
          [...key, this.#epoch],
        );
        const row = bumped.rows[0];
        if (row !== undefined)
          return {
            owner: 'this',
            epoch: Number(row.epoch),
            end: Number(row.end_cursor),
            lines: Number(row.line_count),
          };
        // A statement of its own, so that its snapshot follows the other owner's bump, and so this batch's end.
        const found = await this.#pool.query(
          `SELECT 1 FROM turnjournal_lines
            WHERE store = $1 AND stream = $2 AND position = $3 AND start = $4 AND line = $5`,
          [...key, lines - 1, last.cursor + lastStart, lastLine],
        );
        return { owner: 'other', found: found.rowCount === 1 };
      } catch (error) {
        failure = error instanceof Error ? error : new Error(String(error));
        // Only a lost connection is worth another try; any other failure is the answer.
        if (!isConnectionLoss(error)) return failure;
      }
    }
    return failure;
  }

  async #streamRow(): Promise<{ epoch: number; end: number; lines: number } | undefined> {
    const { rows } = await this.#pool.query<{ epoch: string; end_cursor: string; line_count: string }>(
      'SELECT epoch, end_cursor, line_count FROM turnjournal_streams WHERE store = $1 AND stream = $2',
      [this.#key.store, this.#key.stream],
    );
    const row = rows[0];
    return row === undefined
      ? undefined
      : { epoch: Number(row.epoch), end: Number(row.end_cursor), lines: Number(row.line_count) };
  }

  #fence(cause: unknown): void {
    if (this.#state !== 'open') return;
    this.#state = 'fenced';
    this.#cause = cause;
    this.#refuseAll(this.#refusal() as WriterError);
  }

  #poison(cause: unknown): void {
    if (this.#state !== 'open') return;
    this.#state = 'poisoned';
    this.#cause = cause;
    this.#refuseAll(new WriterPoisonedError(this.name, cause));
  }

  /**
   * Refuses every append queued behind the commit in flight, if any (that one settles as its commit ends: a line it
   * committed is acknowledged, whatever happened meanwhile), and wakes the idle waiters once nothing is in flight.
   */
  #refuseAll(error: WriterError): void {
    const queued = this.#pending.splice(this.#sending);
    this.#commitWanted = false;
    for (const pending of queued) {
      this.#queuedBytes -= pending.bytes.length;
      if (!pending.acknowledged) pending.reject(error);
    }
    if (!this.#draining) for (const resolve of this.#idleWaiters.splice(0)) resolve();
  }

  idle(): Promise<void> {
    if (this.#pending.length === 0 && !this.#draining) return Promise.resolve();
    this.#commitWanted = true;
    const idle = new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
    this.#drain();
    return idle;
  }

  async flush(): Promise<void> {
    await this.idle();
    if (this.#state === 'fenced' || this.#state === 'poisoned') throw this.#refusal();
    if (this.#failed !== null) throw this.#failed;
  }

  async rewrite(lines: Iterable<Uint8Array> | AsyncIterable<Uint8Array>): Promise<void> {
    // The gate closes at the call, before anything is awaited: an append made after it waits for the new lines, and
    // one made before it is committed first (the rewrite replaces it too, as it was there before).
    const before = this.#rewriting;
    let done!: () => void;
    const gate = new Promise<void>((resolve) => {
      done = resolve;
    });
    this.#rewriting = this.#lastRewrite = gate;
    try {
      if (before !== null) await before;
      await this.flush();
      const refusal = this.#refusal();
      if (refusal !== null) throw refusal;
      await this.#replaceLines(lines);
    } finally {
      if (this.#rewriting === gate) this.#rewriting = null;
      done();
      this.#drain();
    }
  }

  /** The rewrite's one transaction: the epoch checked first, every line deleted, the new ones inserted. */
  async #replaceLines(chunks: Iterable<Uint8Array> | AsyncIterable<Uint8Array>): Promise<void> {
    const parts: Uint8Array[] = [];
    for await (const chunk of chunks) parts.push(Uint8Array.from(chunk));
    const bytes = Buffer.concat(parts);
    // The chunks are whole lines' bytes, not necessarily cut at line ends.
    const ends = bytes.length === 0 ? [] : this.#lineEnds(bytes, false);
    const replacement: Pending = {
      bytes,
      ends,
      cursor: 0,
      position: 0,
      acknowledged: true,
      resolve: () => undefined,
      reject: () => undefined,
    };
    const client = await this.#pool.connect();
    let committing = false;
    try {
      await client.query('BEGIN');
      // The lines given were read from the journal as its owner committed it: they replace exactly that, so the row
      // must still carry the owner's epoch and end (TJ-STORE-027). The row's lock, taken here, holds off a takeover
      // until the transaction ends.
      const owner = await client.query(
        `UPDATE turnjournal_streams SET end_cursor = $4, line_count = $5
          WHERE store = $1 AND stream = $2 AND epoch = $3 AND end_cursor = $6 AND line_count = $7 RETURNING 1`,
        [
          this.#key.store,
          this.#key.stream,
          this.#epoch,
          bytes.length,
          ends.length,
          this.#committedEnd,
          this.#committedLines,
        ],
      );
      if (owner.rowCount !== 1) {
        await client.query('ROLLBACK');
        const row = await this.#streamRow();
        if (row === undefined || row.epoch !== this.#epoch)
          this.#fence(new Error(`the stream's epoch is no longer ${this.#epoch}`));
        else
          this.#poison(
            new Error(
              `the stream ends at ${row.end} (${row.lines} lines), not at ${this.#committedEnd} (${this.#committedLines}) as its owner wrote it: a rewrite would drop lines it never read`,
            ),
          );
        throw this.#refusal();
      }
      await client.query('DELETE FROM turnjournal_lines WHERE store = $1 AND stream = $2', [
        this.#key.store,
        this.#key.stream,
      ]);
      for (const rows of batchesOf(replacement)) {
        await client.query(
          `INSERT INTO turnjournal_lines (store, stream, position, start, line, seq, type)
           SELECT $1, $2, l.position, l.start, l.line, l.seq, l.type
             FROM unnest($3::bigint[], $4::bigint[], $5::bytea[], $6::bigint[], $7::text[])
               AS l(position, start, line, seq, type)`,
          [this.#key.store, this.#key.stream, rows.positions, rows.starts, rows.lines, rows.seqs, rows.types],
        );
      }
      committing = true;
      await client.query('COMMIT');
    } catch (error) {
      // Before COMMIT, the transaction is rolled back and the journal is as it was: the writer goes on. A failed
      // COMMIT leaves the outcome unknown to this owner, which can no longer say where its journal ends.
      const refused =
        error instanceof WriterPoisonedError || (error instanceof WriterError && error.code === 'journal_fenced');
      if (!committing && !refused)
        await client.query('ROLLBACK').catch(reportCleanupFailure(`rolling back the rewrite of ${this.name}`));
      client.release(error instanceof Error ? error : true);
      if (committing) {
        const unknown = new WriterError(
          'commit_outcome_unknown',
          `${this.name}: the rewrite's COMMIT failed (${messageOf(error)}): the journal holds the old lines or the new; reopen it to see`,
          this.name,
          { cause: error },
        );
        this.#poison(unknown);
        throw unknown;
      }
      throw error;
    }
    client.release();
    this.#committedEnd = this.#nextCursor = bytes.length;
    this.#committedLines = this.#nextPosition = ends.length;
  }

  reader(): JournalReader {
    const view = {
      read: (buffer: Uint8Array, offset: number, length: number, position: number) =>
        this.#readOwn(buffer, offset, length, position),
      end: () => Promise.resolve(this.#nextCursor),
      close: () => Promise.resolve(),
    };
    return new PostgresJournalReader(this.name, view, this.#pool, this.#key, () => Promise.resolve(this.#committedEnd));
  }

  /** The owner's view: committed rows, then the lines it handed over and has not committed yet (TJ-STORE-003). */
  async #readOwn(buffer: Uint8Array, offset: number, length: number, position: number): Promise<number> {
    const committed = this.#committedEnd;
    const pending = [...this.#pending];
    let copied = 0;
    if (position < committed)
      copied = await readCommittedBytes(this.#pool, this.#key, buffer, offset, length, position, committed);
    for (const one of pending) {
      if (copied >= length) break;
      const at = position + copied;
      if (at < one.cursor || at >= one.cursor + one.bytes.length) continue;
      const part = one.bytes.subarray(at - one.cursor, at - one.cursor + (length - copied));
      buffer.set(part, offset + copied);
      copied += part.length;
    }
    return copied;
  }

  async close(): Promise<void> {
    if (this.#state === 'closed') return;
    if (this.#state === 'open') {
      while (this.#rewriting !== null) await this.#rewriting;
      await this.idle();
    }
    const failed = this.#state === 'poisoned' ? this.#cause : null;
    if (this.#state === 'open' || this.#state === 'poisoned') this.#state = 'closed';
    // Unlocked before the connection ends: the server frees a dead session's locks only once its backend has exited,
    // which a next owner opening right after this close would otherwise race.
    if (this.#state === 'closed')
      await this.#lockClient
        .query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [`${this.#key.store}/${this.#key.stream}`])
        .catch(reportCleanupFailure(`unlocking ${this.name}`));
    await this.#lockClient.end().catch(reportCleanupFailure(`releasing the lock of ${this.name}`));
    if (failed !== null) throw new WriterPoisonedError(this.name, failed);
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The rows of `batch`'s lines as the arrays the INSERT unnests. */
function rowsOf(batch: readonly Pending[]) {
  const rows = {
    positions: [] as number[],
    starts: [] as number[],
    lines: [] as Buffer[],
    seqs: [] as (number | null)[],
    types: [] as (string | null)[],
  };
  for (const pending of batch) {
    let start = 0;
    for (const [i, end] of pending.ends.entries()) {
      const line = Buffer.from(pending.bytes.buffer, pending.bytes.byteOffset + start, end - start);
      const event = eventFieldsOf(line);
      rows.positions.push(pending.position + i);
      rows.starts.push(pending.cursor + start);
      rows.lines.push(line);
      rows.seqs.push(event.seq);
      rows.types.push(event.type);
      start = end;
    }
  }
  return rows;
}

/** The rows of one long run of lines, cut into INSERTs of about {@link BATCH_BYTES} each. */
function* batchesOf(whole: Pending): Generator<ReturnType<typeof rowsOf>> {
  let first = 0;
  let from = 0;
  while (first < whole.ends.length) {
    let last = first;
    while (last + 1 < whole.ends.length && (whole.ends[last + 1] as number) - from <= BATCH_BYTES) last += 1;
    const to = whole.ends[last] as number;
    const part: Pending = {
      ...whole,
      bytes: whole.bytes.subarray(from, to),
      ends: whole.ends.slice(first, last + 1).map((end) => end - from),
      cursor: whole.cursor + from,
      position: whole.position + first,
    };
    yield rowsOf([part]);
    first = last + 1;
    from = to;
  }
}

/**
 * The `seq` and `type` of an event record, for seeking and replay by column; nulls for any other line (a turn or run
 * record keeps its own fields in its bytes, a damaged line is kept as it is and found by the reader).
 */
function eventFieldsOf(line: Buffer): { seq: number | null; type: string | null } {
  let value: unknown;
  try {
    value = JSON.parse(line.toString('utf8', 0, line.length - 1));
  } catch (error) {
    if (error instanceof SyntaxError) return { seq: null, type: null };
    throw error;
  }
  if (typeof value !== 'object' || value === null) return { seq: null, type: null };
  const { seq, type } = value as { seq?: unknown; type?: unknown };
  return {
    seq: typeof seq === 'number' && Number.isSafeInteger(seq) && seq >= 0 ? seq : null,
    // A text column holds no NUL: such a type is kept in the line's bytes only.
    type: typeof type === 'string' && type.length <= 256 && !type.includes('\u0000') ? type : null,
  };
}
