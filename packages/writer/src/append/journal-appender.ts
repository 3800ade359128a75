import type { WritableJournal } from '@turnjournal/reader/record-store';
import { WriterError, WriterPoisonedError } from '../errors.js';
import { type AppendAck, AppendFile, type AppendLineOptions } from './append-file.js';

/** What `idle` answers when nothing is left to wait for. */
const SETTLED: Promise<void> = Promise.resolve();

/** A line reserved with a second one right behind it, which nothing may come between (an automatic checkpoint). */
export interface ReservedLines {
  /** The line the call resolves with. */
  readonly line: Uint8Array;
  /**
   * The line appended right after it, or several whole lines (a split checkpoint, TJ-EVENT-028) appended in one write
   * and truncated together if it fails; the call does not wait for them.
   */
  readonly trailer: Uint8Array;
  /** Told how the trailer ended: null once it is acknowledged, else the error. */
  readonly trailerSettled: (error: unknown) => void;
}

/**
 * What a writer's preparation step returns: the encoded line(s) it reserved, or null when nothing is to be written (a
 * retried submission already in the file). A promise when the preparation has to read first (another shard): later
 * preparations then wait for it, so they are still checked and queued in call order.
 */
export type Prepared = Uint8Array | ReservedLines | WholeLines | null;

/** Several whole lines reserved together (a split checkpoint, TJ-EVENT-028): appended as one, in one write. */
export interface WholeLines {
  readonly lines: Uint8Array;
}

/**
 * The one append-reservation protocol of the writers (`TurnJournal`, `RunWriter`, `EventLog`): every call is
 *
 * 1. **reserved and encoded** by the writer's `prepare` step, in call order, against the writer's current state (a
 *    seq taken, a turn's next state recorded, a request opened) — a check that fails throws and writes nothing;
 * 2. **appended** to the {@link AppendFile} in that order (TJ-DUR-006);
 * 3. **rolled back on failure** by re-reading the state from the file: when a write fails, the file truncates it back
 *    (TJ-DUR-023) and refuses every append queued behind it with `append_cancelled` (their records were built
 *    assuming the failed one precedes them: a seq after it, a `worker_started` of a turn whose `submitted` is not in
 *    the file); once the last of them has settled, the writer's `resync` re-reads its state from the file, and only
 *    then is the next preparation run (TJ-DUR-030). Calls made meanwhile wait, in call order.
 *
 * The failed call and the cancelled ones reject only after the re-read, so a caller that sees the rejection sees the
 * state as the file holds it. A re-read that fails poisons the writer (`writer_poisoned`): reopen it.
 *
 * Writers also run exclusive tasks (a compaction) through it: they start when every earlier append has settled, and
 * appends called meanwhile wait.
 */
export class JournalAppender {
  /** The journal appended to. */
  readonly file: WritableJournal;
  readonly #resync: () => Promise<void>;
  /** Set while an asynchronous preparation, a re-read or an exclusive task runs: preparations wait in `#held`. */
  #busy: Promise<void> | null = null;
  readonly #held: (() => void)[] = [];
  /** Appends handed to the file and not settled yet. */
  #inFlight = 0;
  #drainWaiters: (() => void)[] = [];
  /** What `idle` handed out since the appender was last idle: one promise for every caller waiting meanwhile. */
  #idle: { readonly promise: Promise<void>; readonly resolve: () => void } | null = null;
  /** Resolves once the state has been re-read after a failed write; the failed calls reject after it. */
  #recovery: { promise: Promise<void>; resolve: () => void } | null = null;
  #broken: unknown = null;
  #closing: Promise<void> | null = null;
  /** True once the state has been re-read after the file was poisoned (see #followPoison). */
  #poisonFollowed = false;

  /**
   * @param file the open file; it is switched to refuse appends after a failed write until this appender resumes it.
   * @param resync re-reads the writer's state from `file` (everything acknowledged is in it, nothing else).
   */
  constructor(file: WritableJournal, resync: () => Promise<void>) {
    this.file = file;
    this.#resync = resync;
    // A file used on its own resumes by itself once its queue is empty; under an appender, only once it re-read.
    if (file instanceof AppendFile) file.resumeByOwner();
  }

  /** True once {@link JournalAppender.close} was called, or a re-read or the file failed for good. */
  get refusal(): WriterError | null {
    if (this.#closing !== null) return new WriterError('writer_closed', `${this.file.name} is closed`, this.file.name);
    if (this.#broken !== null) return new WriterPoisonedError(this.file.name, this.#broken);
    return null;
  }

  /**
   * True when a call made now would be prepared at once, in call order, on a usable file: the appender is not
   * closing or broken, nothing waits or runs before it (a preparation, a re-read, an exclusive task), and the file
   * neither refuses appends after a failed write nor is poisoned. What lets a writer reserve a record synchronously
   * (the event log's held deltas) without changing the order of calls.
   */
  get preparesNow(): boolean {
    return (
      this.#closing === null &&
      this.#broken === null &&
      this.#busy === null &&
      this.#held.length === 0 &&
      !this.file.interrupted &&
      !this.file.poisoned
    );
  }

  /** Marks the writer as unusable (a compaction that replaced the file part-way): every later call is refused. */
  break(error: unknown): void {
    this.#broken ??= error;
  }

  /**
   * Reserves, encodes and appends one record (see the class comment). `prepare` runs after every earlier call's
   * preparation, at once when nothing is waiting. Resolves with the line's ack (null when `prepare` wrote nothing).
   * `options.hold` is handed to the file with the line(s) (see `AppendFile.appendLine`): the call then resolves
   * once they are queued.
   */
  append(prepare: () => Prepared | Promise<Prepared>, options?: AppendLineOptions): Promise<AppendAck | null> {
    const refusal = this.refusal;
    if (refusal !== null) return Promise.reject(refusal);
    if (this.#busy === null && this.#held.length === 0 && !this.file.interrupted) return this.#start(prepare, options);
    return new Promise((resolve, reject) => {
      this.#held.push(() => {
        this.#start(prepare, options).then(resolve, reject);
      });
      this.#pump();
    });
  }

  /**
   * Runs `task` with the file to itself once every earlier call has settled (and the state has been re-read after a
   * failure); calls made meanwhile wait and run after it, in call order.
   */
  exclusive<T>(task: () => Promise<T>): Promise<T> {
    const refusal = this.refusal;
    if (refusal !== null) return Promise.reject(refusal);
    return new Promise<T>((resolve, reject) => {
      this.#held.push(() => {
        this.#runExclusive(task).then(resolve, reject);
      });
      this.#pump();
    });
  }

  /**
   * Waits until every call made so far has settled (and any re-read it caused has ended): until `#pump` finds the
   * appender idle, which it looks for whenever a call settles, a preparation or a re-read ends, or a call starts.
   */
  idle(): Promise<void> {
    if (this.#busy === null && this.#inFlight === 0 && this.#held.length === 0) return SETTLED;
    if (this.#idle === null) {
      let resolve = (): void => undefined;
      const promise = new Promise<void>((settle) => {
        resolve = settle;
      });
      this.#idle = { promise, resolve };
    }
    return this.#idle.promise;
  }

  /**
   * Refuses every later call (`writer_closed`), waits for the calls made before, then closes the file. Every call
   * answers with the one close, so the descriptor is closed once.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.idle();
      await this.file.close();
    })();
    return this.#closing;
  }

  #start(prepare: () => Prepared | Promise<Prepared>, options?: AppendLineOptions): Promise<AppendAck | null> {
    if (this.#broken !== null) return Promise.reject(new WriterPoisonedError(this.file.name, this.#broken));
    // Refused before preparing, not only when a line reaches the file: a preparation that writes nothing answers from
    // the writer's state, which after a failed sync may hold a record that was never acknowledged (a retried submit
    // would be told "already submitted").
    if (this.file.poisoned)
      return Promise.reject(new WriterPoisonedError(this.file.name, 'an earlier sync or write failed'));
    let prepared: Prepared | Promise<Prepared>;
    try {
      prepared = prepare();
    } catch (error) {
      return Promise.reject(error);
    }
    if (!(prepared instanceof Promise)) return this.#enqueue(prepared, options);
    const done = this.#block();
    return prepared.then(
      (lines) => {
        // Queued before the calls that waited for it are released.
        const written = this.#enqueue(lines, options);
        done();
        return written;
      },
      (error: unknown) => {
        done();
        throw error;
      },
    );
  }

  #enqueue(prepared: Prepared, options?: AppendLineOptions): Promise<AppendAck | null> {
    if (prepared === null) return Promise.resolve(null);
    // A held line is only queued, not written: nothing to track (a failed write that loses it poisons the file).
    if ('lines' in prepared)
      return options?.hold === true && this.file.durability === 'none'
        ? this.file.appendLines(prepared.lines, options)
        : this.#track(prepared.lines, true);
    if (options?.hold === true && this.file.durability === 'none') {
      if (prepared instanceof Uint8Array) return this.file.appendLine(prepared, options);
      const written = this.file.appendLine(prepared.line, options);
      settleTrailer(prepared, this.file.appendLines(prepared.trailer, options));
      return written;
    }
    if (prepared instanceof Uint8Array) return this.#track(prepared);
    const written = this.#track(prepared.line);
    settleTrailer(prepared, this.#track(prepared.trailer, true));
    return written;
  }

  /** @param lines true when `line` may hold several whole lines (a trailer), appended as one. */
  #track(line: Uint8Array, lines = false): Promise<AppendAck> {
    this.#inFlight += 1;
    return (lines ? this.file.appendLines(line) : this.file.appendLine(line)).then(this.#written, this.#notWritten);
  }

  // The two outcomes of a tracked append, made once rather than as two closures per append.
  readonly #written = (ack: AppendAck): AppendAck => {
    this.#settled();
    return ack;
  };

  readonly #notWritten = (error: unknown): Promise<never> => {
    // The recovery is registered before the re-read can start, so the rejection waits for it.
    const recovered = this.file.interrupted || this.#mustFollowPoison() ? this.#awaitRecovery() : null;
    this.#settled();
    if (recovered === null) throw error;
    return recovered.then(() => {
      throw error;
    });
  };

  #settled(): void {
    this.#inFlight -= 1;
    if (this.#inFlight === 0) {
      const waiters = this.#drainWaiters;
      this.#drainWaiters = [];
      for (const resolve of waiters) resolve();
    }
    this.#pump();
  }

  #awaitRecovery(): Promise<void> {
    if (this.#recovery === null) {
      let resolve = (): void => undefined;
      const promise = new Promise<void>((r) => {
        resolve = r;
      });
      this.#recovery = { promise, resolve };
    }
    return this.#recovery.promise;
  }

  #endRecovery(): void {
    const recovery = this.#recovery;
    this.#recovery = null;
    recovery?.resolve();
  }

  /** Marks the appender busy; the returned function ends that and runs what waited. */
  #block(): () => void {
    let open = (): void => undefined;
    this.#busy = new Promise<void>((resolve) => {
      open = resolve;
    });
    return () => {
      this.#busy = null;
      open();
      this.#pump();
    };
  }

  /** Runs what waits, in call order, until something makes the appender busy again. */
  #pump(): void {
    while (this.#busy === null) {
      if (this.file.interrupted && this.#broken === null && !this.file.poisoned) {
        // Re-read once every append queued behind the failure has been refused.
        if (this.#inFlight === 0) this.#recover();
        return;
      }
      if (this.#mustFollowPoison()) {
        if (this.#inFlight === 0) this.#followPoison();
        return;
      }
      // Nothing to re-read (the file refuses appends for good): the waiting calls get that refusal.
      if (this.#inFlight === 0) this.#endRecovery();
      const next = this.#held.shift();
      if (next === undefined) break;
      next();
    }
    if (this.#busy === null && this.#inFlight === 0 && this.#held.length === 0) {
      const idle = this.#idle;
      this.#idle = null;
      idle?.resolve();
    }
  }

  #recover(): void {
    const done = this.#block();
    this.#reread().finally(done);
  }

  /** True while the file is poisoned and the state has not been re-read since. */
  #mustFollowPoison(): boolean {
    return this.file.poisoned && !this.#poisonFollowed && this.#broken === null;
  }

  /**
   * After a failed sync (or a write that lost held lines) the file refuses appends for good (TJ-DUR-021), but the
   * calls queued behind the failure were prepared before it: their reservations (a seq, a message, a turn's next
   * state, an open request, a run's end) are in the writer's state although their records were never written, and the
   * state getters (`snapshot()`, `stateOf()`, `ended`…) answered them as written. Once every call has settled, the state
   * is re-read from the file once, as a reopen would read it; the file stays poisoned. The failed calls reject after
   * the re-read, so a caller that sees a rejection sees that state.
   */
  #followPoison(): void {
    this.#poisonFollowed = true;
    const done = this.#block();
    (async () => {
      try {
        await this.#resync();
      } catch (error) {
        this.#broken ??= error;
      } finally {
        this.#endRecovery();
      }
    })().finally(done);
  }

  async #reread(): Promise<void> {
    try {
      await this.#resync();
      this.file.resume();
    } catch (error) {
      this.#broken ??= error;
    } finally {
      this.#endRecovery();
    }
  }

  async #runExclusive<T>(task: () => Promise<T>): Promise<T> {
    const done = this.#block();
    try {
      while (this.#inFlight > 0) await new Promise<void>((resolve) => this.#drainWaiters.push(resolve));
      // Held lines too: the task reads the file (a compaction copies what it holds) and must find every record.
      await this.file.idle();
      if (this.file.interrupted && this.#broken === null && !this.file.poisoned) await this.#reread();
      if (this.#broken !== null) throw new WriterPoisonedError(this.file.name, this.#broken);
      if (this.file.poisoned) throw new WriterPoisonedError(this.file.name, 'an earlier sync or write failed');
      return await task();
    } finally {
      done();
    }
  }
}

/** Tells `trailerSettled` how the trailer's write ended. */
function settleTrailer(prepared: ReservedLines, written: Promise<unknown>): void {
  written.then(
    () => prepared.trailerSettled(null),
    (error: unknown) => prepared.trailerSettled(error),
  );
}
