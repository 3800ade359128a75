import type { RecordStore } from '@turnjournal/reader/record-store';
import { isValidIdentifier } from '@turnjournal/reader/store-format';
import {
  type AcquireLockOptions,
  openSessionJournals,
  type SweepReport,
  sweepStoreTurnJournals,
  sweepTurnJournals,
} from '@turnjournal/writer';
import { type FileRecordStore, openFileRecordStore } from '@turnjournal/writer/file-store';
import type { FileSystem } from '@turnjournal/writer/file-system';
import { LiveError } from './errors.js';
import { type FanOut, InProcessFanOut } from './fanout.js';
import { FollowerSession } from './follower-session.js';
import { type LiveClock, ProcessTime, systemClock } from './live-clock.js';
import type { TokenMode } from './records.js';
import { reservedSessionIdRefusal } from './reserved-session-ids.js';
import { type CloseOptions, LiveSession, type LiveSessionSettings } from './session.js';
import { storeFanOut } from './store-fan-out.js';

/** Options of {@link openConversationHub}. */
export interface ConversationHubOptions {
  /**
   * The store root: every session's journals live at the layout of spec §4.4 under it (a file store). Give either
   * `root` or `store`.
   */
  readonly root?: string;
  /**
   * A record store (spec §19) instead of `root`: the hub's sessions, their followers and their announcements go
   * through it, and the retention job sweeps the store's turn journals through it (spec §19.1, TJ-STORE-011); `fs` and
   * `lock` are the store's business.
   */
  readonly store?: RecordStore;
  /** The file-system layer; the real one by default. */
  readonly fs?: FileSystem;
  /**
   * The clocks (spec §18.6): `{ now, monotonic }`, or a wall clock alone (the monotonic one is then `performance.now`);
   * by default the record store's own clock when it has one (a database's, TJ-STORE-026), else the system's. Records are stamped and aged by the wall clock as TJ-LIVE-031 and TJ-LIVE-032 bound it;
   * idle time and a subscriber's lag are measured on the monotonic clock.
   */
  readonly clock?: LiveClock | (() => number);
  /**
   * The fan-out of "durable through seq" announcements; in-process by default. Announcements also go to the store's
   * channel, which reaches followers in other processes (TJ-LIVE-042) whatever this is.
   */
  readonly fanOut?: FanOut;
  /**
   * How often a follower of a session another process owns reads the owner's durable mark (spec §19.3); 25 ms by
   * default. It bounds how late a follower's subscribers get a record after its owner's subscribers.
   */
  readonly followPollMs?: number;
  /** Records of the in-memory window per session (TJ-LIVE-011); 4096 by default. */
  readonly ringRecords?: number;
  /** Bytes of the in-memory window per session; 4 MiB by default. */
  readonly ringBytes?: number;
  /**
   * A live subscriber whose oldest missing record became durable longer ago than this is cut off (TJ-LIVE-030); until
   * then the window keeps what it has not received, whatever one commit delivers. 30 seconds by default.
   */
  readonly subscriberLagMs?: number;
  /**
   * Most bytes the window of a session counts while live subscribers still read what it holds (TJ-LIVE-030; never less
   * than `ringBytes`): the memory bound of a burst; a subscriber that would need more is cut off. 64 MiB by default. A
   * record counts at its JSON length, except a checkpoint (or a split one's part), whose messages are the session's own:
   * 16 bytes a message plus its run index's JSON (TJ-LIVE-067), so a long conversation's checkpoints cut off no
   * subscriber that reads. The window holds at most twice what it counts, plus messages an `undo` or a `message_edit`
   * dropped from the list since its oldest record (spec §18.3).
   */
  readonly subscriberLagBytes?: number;
  /** Longest a delta waits for its sync when no boundary comes first (TJ-LIVE-007); 20 ms by default. */
  readonly deltaFlushMs?: number;
  /**
   * What a run's tokens cost on disk (spec §18.2, TJ-LIVE-058): `durable` (the default) writes each as a `chat.delta`,
   * made durable with the next sync, so a crash loses at most the last `deltaFlushMs`; `segments` writes no record per
   * token, only the segment's text at a paragraph end, every 4,096 characters and at its close (TJ-LIVE-059), so a
   * crash loses the open segment's text since its last paragraph. Subscribers that ask for tokens get each at once in
   * both (TJ-LIVE-060).
   */
  readonly tokens?: TokenMode;
  /** Delivery window (TJ-LIVE-015): finished runs older than this count as delivered (`expired`); 48 h by default. */
  readonly deliveryWindowMs?: number;
  /** A session with no active run and no subscriber is closed after this idle time; 5 minutes by default. */
  readonly idleCloseMs?: number;
  /**
   * Most sessions open at once (TJ-LIVE-065); 1,000 by default. Each open session holds its journals' file handles
   * (two on a file store), so this bounds the handles a flood of sessions can take. When an open would pass it, the
   * idle session used least recently (no active run, no subscriber) is closed first, and opened again, recovered, by
   * its next `hub.session()`; a session with a run or a subscriber is never closed for room. When every open session
   * is busy, the open is refused with `too_many_sessions`.
   */
  readonly maxOpenSessions?: number;
  /**
   * The in-process retention job: every `intervalMs` (1 hour by default) it compacts the event log of every open
   * session (one whose run is streaming is left to the next pass, see {@link ConversationHub.runRetention}) and
   * sweeps the store's turn journals with a `windowMs` window (48 h by default). `false` turns it off.
   */
  readonly retention?: false | { readonly intervalMs?: number; readonly windowMs?: number };
  /**
   * Records between two automatic checkpoints of each event log (50 by default); a checkpoint also waits until the
   * records since the last one are as many bytes as it was (TJ-EVENT-006).
   */
  readonly checkpointInterval?: number;
  /** Options of the lock acquisitions. */
  readonly lock?: AcquireLockOptions;
  /**
   * Told of every failure no caller awaits: a retention pass's compaction or sweep, the close of an idle or retired
   * session, a session that failed for good. Each is counted in {@link ConversationHub.metrics} too. Without it, each
   * failure is emitted as a process warning (code `TURNJOURNAL_BACKGROUND_FAILURE`), never dropped.
   */
  readonly onError?: (failure: HubFailure) => void;
}

/** Options of {@link ConversationHub.session}. */
export interface HubSessionOptions {
  /**
   * The token mode of this session's runs (spec §18.2, TJ-LIVE-066), instead of the hub's `tokens`: kept by the hub
   * for the session (also when it is closed for idleness or room and opened again) until another call names another
   * mode, which applies from the session's next run; a run keeps the mode it started in (TJ-LIVE-058).
   */
  readonly tokens?: TokenMode;
}

/** The background work of a hub a {@link HubFailure} comes from. */
export type HubTask =
  /** A retention pass run by the hub's timer: one session's compaction, or the store's turn-journal sweep. */
  | 'retention'
  /** The close of a session idle for `idleCloseMs`. */
  | 'idle_close'
  /** The close of a session the hub let go otherwise (retired, failed to finish opening, or closed with the hub). */
  | 'close'
  /** A session failed for good: a write or sync of its journals failed (the next `hub.session()` reopens it). */
  | 'session'
  /**
   * An announcement to the store's notification channel failed: the records are durable all the same, and followers
   * read the durable end again at their next announcement (TJ-STORE-007).
   */
  | 'channel';

/** A failure of the hub's background work, as {@link ConversationHubOptions.onError} is told it. */
export interface HubFailure {
  /** The work that failed. */
  readonly task: HubTask;
  /** The session concerned, when one is (a sweep concerns the store). */
  readonly sessionId?: string;
  /** The error's stable `code` (`write_failed`, `journal_locked`, …), or `unknown` for an error without one. */
  readonly code: string;
  /** The error itself. */
  readonly error: unknown;
}

/** Counters of a hub's background failures since it opened, to export as metrics. */
export interface HubMetrics {
  /** Every failure reported. */
  readonly failures: number;
  /** Idle sessions closed to make room for another under `maxOpenSessions` (TJ-LIVE-065). */
  readonly evictions: number;
  /** Opens refused with `too_many_sessions`: every open session was busy (TJ-LIVE-065). */
  readonly refusedOpens: number;
  /** Failures per task. */
  readonly failuresByTask: Readonly<Record<HubTask, number>>;
  /** Failures per error code (see {@link HubFailure.code}). */
  readonly failuresByCode: Readonly<Record<string, number>>;
}

/** What one pass of the retention job did. */
export interface RetentionReport {
  /** Per open session: the compaction's outcome, or the error that stopped it. */
  readonly sessions: readonly {
    readonly sessionId: string;
    readonly removedRecords?: number;
    /** Finished runs nobody acknowledged within the delivery window: they no longer blocked compaction (TJ-RET-018). */
    readonly expiredRuns?: readonly string[];
    /** Records stamped while a clock was ahead, when there were any: aged by the records after them (TJ-RET-019). */
    readonly futureStampedRecords?: number;
    /**
     * The run that was streaming: the compaction, which holds the session's calls while it runs, was left to the next
     * pass, which compacts the session whether or not a run is active then.
     */
    readonly deferredFor?: string;
    readonly error?: string;
  }[];
  /**
   * The turn-journal sweep (live sessions' files are skipped, TJ-RET-009), or its error.
   */
  readonly turns: SweepReport | { readonly error: string };
}

const HOUR = 3_600_000;

/**
 * A session as a hub hands it out: its owner ({@link LiveSession}), or a {@link FollowerSession} when another
 * process owns it (spec §18.8); `role` tells them apart.
 */
export type HubSession = LiveSession | FollowerSession;

/**
 * The registry of live sessions of one store (seed 003's ConversationHub): {@link ConversationHub.session} gives the
 * one in-process owner of a session's journals, opened (and recovered) on first use and closed when idle.
 */
export class ConversationHub {
  /** The store root, or the name of the record store the hub was opened on. */
  readonly root: string;
  readonly #options: ConversationHubOptions;
  readonly #settings: LiveSessionSettings;
  /** The hub's own file store (with `root`), swept under its directory lock; undefined with `store`. */
  readonly #fileStore: FileRecordStore | undefined;
  readonly #fanOut: FanOut;
  readonly #sessions = new Map<string, Promise<HubSession>>();
  /** The session each open resolved to, so that `close` reaches open sessions at once, not a tick later. */
  readonly #opened = new WeakMap<Promise<HubSession>, HubSession>();
  readonly #timers: ReturnType<typeof setInterval>[] = [];
  readonly #maxOpenSessions: number;
  /** Token modes given by `session(id, { tokens })`, kept across closes and reopens of the session. */
  readonly #tokenModes = new Map<string, TokenMode>();
  /** Sessions the hub let go and is still closing: a reopen waits for their locks to be released. */
  readonly #closing = new Map<string, Promise<void>>();
  #evictions = 0;
  #refusedOpens = 0;
  /** Sessions whose compaction the last retention pass left for a streaming run (see `runRetention`). */
  #deferred = new Set<string>();
  #closed = false;
  readonly #failuresByTask: Record<HubTask, number> = {
    retention: 0,
    idle_close: 0,
    close: 0,
    session: 0,
    channel: 0,
  };
  readonly #failuresByCode = new Map<string, number>();

  /** @internal use {@link openConversationHub}. */
  constructor(options: ConversationHubOptions) {
    this.root = options.root ?? (options.store as RecordStore).name;
    this.#options = options;
    const fileStore =
      options.store === undefined
        ? openFileRecordStore({
            root: options.root as string,
            ...(options.fs === undefined ? {} : { fs: options.fs }),
            ...(options.lock === undefined ? {} : { lock: options.lock }),
            ...(options.followPollMs === undefined ? {} : { channelPollMs: options.followPollMs }),
          })
        : undefined;
    this.#fileStore = fileStore;
    const store: RecordStore = fileStore ?? (options.store as RecordStore);
    this.#fanOut = options.fanOut ?? new InProcessFanOut();
    this.#settings = {
      store,
      time:
        options.clock === undefined && options.store?.clock !== undefined
          ? new ProcessTime(liveClock(options.store.clock), { deferStart: true })
          : new ProcessTime(liveClock(options.clock)),
      fanOut: storeFanOut(this.#fanOut, store.channel, (sessionId, error) => this.#report('channel', error, sessionId)),
      ringRecords: positive(options.ringRecords, 4096, 'ringRecords'),
      ringBytes: positive(options.ringBytes, 4 * 1024 * 1024, 'ringBytes'),
      subscriberLagMs: positive(options.subscriberLagMs, 30_000, 'subscriberLagMs'),
      subscriberLagBytes: positive(options.subscriberLagBytes, 64 * 1024 * 1024, 'subscriberLagBytes'),
      deltaFlushMs: positive(options.deltaFlushMs, 20, 'deltaFlushMs'),
      tokens: tokenMode(options.tokens),
      deliveryWindowMs: positive(options.deliveryWindowMs, 48 * HOUR, 'deliveryWindowMs'),
      onFailure: (sessionId, error) => this.#report('session', error, sessionId),
    };
    if (options.onError !== undefined && typeof options.onError !== 'function')
      throw new LiveError('invalid_request', 'onError must be a function');
    this.#maxOpenSessions = positive(options.maxOpenSessions, 1000, 'maxOpenSessions');
    const idle = positive(options.idleCloseMs, 5 * 60_000, 'idleCloseMs');
    this.#every(Math.max(1000, Math.floor(idle / 2)), 'idle_close', () => this.#closeIdle(idle));
    if (options.retention !== false) {
      const interval = positive(options.retention?.intervalMs, HOUR, 'retention.intervalMs');
      this.#every(interval, 'retention', async () => this.#reportRetention(await this.#retention()));
    }
  }

  /** The counts of background failures reported since the hub opened (see {@link ConversationHubOptions.onError}). */
  metrics(): HubMetrics {
    const failuresByTask = { ...this.#failuresByTask };
    return {
      failures: Object.values(failuresByTask).reduce((sum, count) => sum + count, 0),
      evictions: this.#evictions,
      refusedOpens: this.#refusedOpens,
      failuresByTask,
      failuresByCode: Object.fromEntries(this.#failuresByCode),
    };
  }

  /** The fan-out sessions announce on: listen to it to learn that a session is durable through a seq. */
  get fanOut(): FanOut {
    return this.#fanOut;
  }

  /**
   * The session `sessionId`, opened on first use: its journals are locked, a crash's leftovers recovered. When another
   * process holds its journals, the session is served here as a {@link FollowerSession} (spec §18.8): subscribers,
   * snapshots and run status as the owner's, every write refused with `not_owner`; once that owner is gone, the next
   * call opens it as owner.
   */
  session(sessionId: string, options: HubSessionOptions = {}): Promise<HubSession> {
    if (this.#closed) return Promise.reject(new LiveError('session_closed', 'the hub is closed'));
    if (typeof sessionId !== 'string' || !isValidIdentifier(sessionId))
      return Promise.reject(
        new LiveError('invalid_request', `the session id ${JSON.stringify(String(sessionId)).slice(0, 80)} is invalid`),
      );
    const reserved = reservedSessionIdRefusal(sessionId);
    if (reserved !== null) return Promise.reject(reserved);
    if (typeof options !== 'object' || options === null)
      return Promise.reject(new LiveError('invalid_request', 'hub.session options must be an object'));
    if (options.tokens !== undefined) {
      let mode: TokenMode;
      try {
        mode = tokenMode(options.tokens);
      } catch (error) {
        return Promise.reject(error);
      }
      // Bounded like the open sessions: a mode equal to the hub's needs no entry.
      if (mode === this.#settings.tokens) this.#tokenModes.delete(sessionId);
      else this.#tokenModes.set(sessionId, mode);
    }
    return this.#session(sessionId);
  }

  #session(sessionId: string): Promise<HubSession> {
    if (this.#closed) return Promise.reject(new LiveError('session_closed', 'the hub is closed'));
    const existing = this.#sessions.get(sessionId);
    if (existing !== undefined) {
      return existing.then(async (session) => {
        if (!session.retired && this.#sessions.get(sessionId) === existing && !(await this.#ownerGone(session))) {
          session.touch();
          if (session.role === 'owner') session.useTokens(this.#tokensOf(sessionId));
          return session;
        }
        if (this.#sessions.get(sessionId) === existing) this.#sessions.delete(sessionId);
        // A session closing, closed or failed is not handed out (its calls would be refused): it is let go, its
        // locks released, and opened again, which recovers what its files hold. Its close failing is no reason to
        // refuse the caller the reopened session (whose open fails on its own if the locks stayed): it is reported.
        await this.#closeReported(session, 'close');
        return this.#session(sessionId);
      });
    }
    let room: Promise<void>;
    try {
      room = this.#makeRoom();
    } catch (error) {
      return Promise.reject(error);
    }
    const opening = room
      .then(() => this.#open(sessionId))
      .catch((error: unknown) => {
        throw reopenFailure(sessionId, error);
      });
    this.#sessions.set(sessionId, opening);
    // The caller of this open receives its failure; here it only frees the slot for the next try.
    opening.then(
      (session) => this.#opened.set(opening, session),
      () => {
        if (this.#sessions.get(sessionId) === opening) this.#sessions.delete(sessionId);
      },
    );
    return opening;
  }

  /**
   * Makes room for one more open under `maxOpenSessions` (TJ-LIVE-065): when the hub is full, lets go of the idle
   * session used least recently (a retired one first) and resolves once its journals are closed; throws
   * `too_many_sessions` at once when every session is busy or still opening. Synchronous up to the close, so that
   * opens started together never take the same room.
   */
  #makeRoom(): Promise<void> {
    if (this.#sessions.size < this.#maxOpenSessions) return Promise.resolve();
    let victim: HubSession | undefined;
    for (const opening of this.#sessions.values()) {
      const session = this.#opened.get(opening);
      if (session === undefined) continue;
      if (session.retired) {
        victim = session;
        break;
      }
      if (session.busy) continue;
      if (victim === undefined || session.lastUsed < victim.lastUsed) victim = session;
    }
    if (victim === undefined) {
      this.#refusedOpens += 1;
      throw new LiveError(
        'too_many_sessions',
        `the hub has ${this.#maxOpenSessions} sessions open (maxOpenSessions), each with a run or a subscriber; retry once one is idle`,
      );
    }
    this.#evictions += 1;
    this.#sessions.delete(victim.sessionId);
    return this.#letGo(victim, 'idle_close');
  }

  /** Ids of the sessions open now. */
  openSessions(): string[] {
    return [...this.#sessions.keys()];
  }

  /**
   * One pass of the retention job (also run every `retention.intervalMs`): compacts each open session's event log
   * (finished runs that are delivered, or whose delivery expired, TJ-LIVE-015) and sweeps the store's turn journals. A
   * session whose run is streaming is left to the next pass (`deferredFor`): a compaction holds the session's calls
   * while it copies the log, so the run's stream would stall, and the run's own records could not go anyway
   * (TJ-RET-013). The next pass compacts it even if a run streams then, so a busy session waits one interval at most.
   */
  async runRetention(): Promise<RetentionReport> {
    const { sessions, turns } = await this.#retention();
    return { sessions, turns };
  }

  async #retention(): Promise<RetentionReport & { readonly errors: readonly HubFailure[] }> {
    const errors: HubFailure[] = [];
    const failed = (error: unknown, sessionId?: string): string => {
      errors.push({ task: 'retention', code: codeOf(error), error, ...(sessionId === undefined ? {} : { sessionId }) });
      return error instanceof Error ? error.message : String(error);
    };
    const windowMs = this.#options.retention === false ? 48 * HOUR : (this.#options.retention?.windowMs ?? 48 * HOUR);
    const sessions: RetentionReport['sessions'][number][] = [];
    const deferred = new Set<string>();
    for (const [sessionId, opening] of [...this.#sessions]) {
      try {
        const session = await opening;
        // A follower's log is its owner's to compact.
        if (session.retired || session.role === 'follower') continue;
        const active = session.activeRequestId;
        if (active !== undefined && !this.#deferred.has(sessionId)) {
          deferred.add(sessionId);
          sessions.push({ sessionId, deferredFor: active });
          continue;
        }
        const result = await session.compact({ retentionSeconds: windowMs / 1000 });
        sessions.push({
          sessionId,
          removedRecords: result.removedRecords,
          expiredRuns: result.expiredRuns,
          ...(result.futureStampedRecords > 0 ? { futureStampedRecords: result.futureStampedRecords } : {}),
        });
      } catch (error) {
        sessions.push({ sessionId, error: failed(error, sessionId) });
      }
    }
    this.#deferred = deferred;
    let turns: RetentionReport['turns'];
    const fileStore = this.#fileStore;
    const sweep = { retentionSeconds: windowMs / 1000, clock: () => this.#settings.time.now() };
    try {
      // A file store's sweep holds the directory lock of its turn journals (TJ-RET-010); another store's owns each
      // session's journals while it rewrites them (TJ-STORE-011).
      turns =
        fileStore === undefined
          ? await sweepTurnJournals(this.#settings.store, sweep)
          : await sweepStoreTurnJournals(fileStore.root, { ...sweep, fs: fileStore.fs });
    } catch (error) {
      turns = { error: failed(error) };
    }
    return { sessions, turns, errors };
  }

  /** Reports the failures of a retention pass the hub's timer ran (a caller of `runRetention` reads its report). */
  #reportRetention(pass: { readonly errors: readonly HubFailure[] }): void {
    for (const failure of pass.errors) this.#report(failure.task, failure.error, failure.sessionId);
  }

  /**
   * Closes every session and stops the hub's timers. An active run is cancelled with reason `server_shutdown`
   * (`runs: 'cancel'`, the default), or waited for (`runs: 'wait'`), never left for the next start to close as a
   * crash (TJ-LIVE-036). Every session is closed even when one fails to; the failures are counted in
   * {@link ConversationHub.metrics} and the close rejects with them (one error, or an `AggregateError`).
   */
  async close(options: CloseOptions = {}): Promise<void> {
    const runs = options.runs ?? 'cancel';
    if (runs !== 'cancel' && runs !== 'wait')
      throw new LiveError('invalid_request', `runs must be 'cancel' or 'wait', got ${String(runs)}`);
    this.#closed = true;
    for (const timer of this.#timers) clearInterval(timer);
    const sessions = [...this.#sessions.values()];
    this.#sessions.clear();
    const closeOne = (session: HubSession) =>
      session.close(options).catch((error: unknown) => {
        this.#count('close', error);
        throw error;
      });
    // An open session starts closing now (a send right after `close()` is refused); one still opening once it opened.
    // An open that failed was answered to its caller; there is nothing of it to close.
    const settled = await Promise.allSettled(
      sessions.map((opening) => {
        const open = this.#opened.get(opening);
        return open !== undefined ? closeOne(open) : opening.then(closeOne, () => undefined);
      }),
    );
    // Sessions let go before (idle, evicted) are closing on their own; their failures went to onError.
    await Promise.all([...this.#closing.values()]);
    const failures = settled.flatMap((result) => (result.status === 'rejected' ? [result.reason] : []));
    if (failures.length === 1) throw failures[0];
    if (failures.length > 1) throw new AggregateError(failures, `${failures.length} sessions failed to close`);
  }

  /** True when `session` follows an owner that no longer holds the session's log: it is time to own it. */
  async #ownerGone(session: HubSession): Promise<boolean> {
    if (session.role !== 'follower') return false;
    return !(await this.#settings.store.ownerHeld({ family: 'event', sessionId: session.sessionId }));
  }

  async #open(sessionId: string): Promise<HubSession> {
    // The same session let go a moment ago (idle, or evicted for room) holds its locks until its close ends.
    await this.#closing.get(sessionId);
    const stampRef: { value: number | undefined } = { value: undefined };
    let journals: Awaited<ReturnType<typeof openSessionJournals>>;
    try {
      journals = await this.#openJournals(sessionId, stampRef);
    } catch (error) {
      // Another process owns the session: serve its readers as a follower (TJ-LIVE-042, TJ-LIVE-043).
      if ((error as { code?: unknown } | null)?.code !== 'journal_locked') throw error;
      return FollowerSession.open(sessionId, this.#settings.store, this.#settings);
    }
    try {
      const settings = { ...this.#settings, tokens: this.#tokensOf(sessionId) };
      return await LiveSession.open(sessionId, journals, settings, stampRef);
    } catch (error) {
      // The caller receives the open's failure; a failure to release the journals too (their locks may stay) is
      // reported apart, not dropped.
      await journals.close().catch((closeError: unknown) => this.#report('close', closeError, sessionId));
      throw error;
    }
  }

  /** The token mode of `sessionId`'s next runs: the one `session(id, { tokens })` gave it, or the hub's. */
  #tokensOf(sessionId: string): TokenMode {
    return this.#tokenModes.get(sessionId) ?? this.#settings.tokens;
  }

  #openJournals(sessionId: string, stampRef: { value: number | undefined }) {
    const time = this.#settings.time;
    const fileStore = this.#fileStore;
    return openSessionJournals({
      ...(fileStore === undefined ? { store: this.#settings.store } : { root: fileStore.root, fs: fileStore.fs }),
      sessionId,
      eventDurability: 'none',
      turnDurability: 'group',
      clock: () => stampRef.value ?? time.stamp(),
      ...(this.#options.checkpointInterval === undefined
        ? {}
        : { checkpointInterval: this.#options.checkpointInterval }),
      ...(this.#options.lock === undefined ? {} : { lock: this.#options.lock }),
    });
  }

  async #closeIdle(idleMs: number): Promise<void> {
    // Monotonic: a step of the wall clock neither closes a session early nor keeps it and its locks open (TJ-LIVE-033).
    const now = this.#settings.time.monotonic();
    for (const [sessionId, opening] of [...this.#sessions]) {
      // An open that failed was answered to its caller, and its slot is freed: nothing to close.
      const session = await opening.catch(() => undefined);
      if (session === undefined) continue;
      const idle =
        session.retired ||
        (session.activeRequestId === undefined && session.subscriberCount === 0 && now - session.lastUsed > idleMs);
      if (!idle) continue;
      if (this.#sessions.get(sessionId) === opening) this.#sessions.delete(sessionId);
      await this.#letGo(session, 'idle_close');
    }
  }

  /** Closes a session the hub no longer hands out, marking it as closing so that a reopen waits for its locks. */
  #letGo(session: HubSession, task: HubTask): Promise<void> {
    const { sessionId } = session;
    const closing = this.#closeReported(session, task).finally(() => {
      if (this.#closing.get(sessionId) === closing) this.#closing.delete(sessionId);
    });
    this.#closing.set(sessionId, closing);
    return closing;
  }

  /** Closes a session the hub lets go of; its failure goes to `onError`, as no caller waits for it. */
  async #closeReported(session: HubSession, task: HubTask): Promise<void> {
    try {
      await session.close();
    } catch (error) {
      this.#report(task, error, session.sessionId);
    }
  }

  /**
   * Runs `run` every `ms`, never two at once: a pass longer than the interval (a retention pass over a large store)
   * is not overlapped by the next, which would only find the sweep lock held by the first and report it as a failure.
   */
  #every(ms: number, task: HubTask, run: () => Promise<unknown>): void {
    let running = false;
    const timer = setInterval(() => {
      if (running) return;
      running = true;
      run()
        .catch((error: unknown) => this.#report(task, error))
        .finally(() => {
          running = false;
        });
    }, ms);
    timer.unref();
    this.#timers.push(timer);
  }

  #count(task: HubTask, error: unknown): string {
    const code = codeOf(error);
    this.#failuresByTask[task] += 1;
    this.#failuresByCode.set(code, (this.#failuresByCode.get(code) ?? 0) + 1);
    return code;
  }

  /** Counts a background failure and tells `onError` (or, without one, emits it as a process warning). */
  #report(task: HubTask, error: unknown, sessionId?: string): void {
    const code = this.#count(task, error);
    const failure: HubFailure = { task, code, error, ...(sessionId === undefined ? {} : { sessionId }) };
    const onError = this.#options.onError;
    if (onError === undefined) {
      const what =
        task === 'session'
          ? `session ${sessionId}`
          : `${task}${sessionId === undefined ? '' : ` of session ${sessionId}`}`;
      const detail = error instanceof Error ? error.message : String(error);
      process.emitWarning(`turnjournal hub: ${what} failed (${code}): ${detail}`, {
        code: 'TURNJOURNAL_BACKGROUND_FAILURE',
      });
      return;
    }
    try {
      onError(failure);
    } catch (hookError) {
      // A throwing hook must not stop the hub's timers nor hide the failure it was told: both go to the process.
      process.emitWarning(`turnjournal hub: onError threw: ${String(hookError)}`, {
        code: 'TURNJOURNAL_BACKGROUND_FAILURE',
      });
    }
  }
}

/** The stable `code` of an error (a `LiveError`'s, a `WriterError`'s, an errno), or `unknown`. */
function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' && code !== '' ? code : 'unknown';
}

/** Codes of the writers' errors that say a write or sync failed: the disk, not the caller, decides a retry. */
const WRITE_FAILURES: ReadonlySet<string> = new Set(['write_failed', 'append_cancelled', 'writer_poisoned']);

/**
 * What `hub.session()` answers when recovering the session on open failed to write (TJ-LIVE-024): `session_failed`,
 * saying that nothing of the session is lost and that the same call opens it once the cause (a full disk, say) is
 * gone; another error (a lock held by another process, a refusal) passes through.
 */
function reopenFailure(sessionId: string, error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !WRITE_FAILURES.has(code)) return error;
  return new LiveError(
    'session_failed',
    `session "${sessionId}" could not be opened (${error instanceof Error ? error.message : String(error)}); what its files hold is kept: call hub.session() again once the cause is gone (room on a full disk), which retries the open`,
    { cause: error },
  );
}

function liveClock(clock: ConversationHubOptions['clock']): LiveClock {
  if (clock === undefined) return systemClock;
  if (typeof clock === 'function') return { now: clock, monotonic: systemClock.monotonic };
  if (
    typeof clock !== 'object' ||
    clock === null ||
    typeof clock.now !== 'function' ||
    typeof clock.monotonic !== 'function'
  )
    throw new LiveError('invalid_request', 'clock must be a function or { now(), monotonic() }');
  return clock;
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    throw new LiveError('invalid_request', `${name} must be a positive number, got ${String(value)}`);
  return value;
}

/**
 * Opens a conversation hub over a store (spec §18): sessions are opened on first use by {@link ConversationHub.session}.
 */
export function openConversationHub(options: ConversationHubOptions): ConversationHub {
  if (typeof options !== 'object' || options === null)
    throw new LiveError('invalid_request', 'openConversationHub needs { root } or { store }');
  const hasRoot = typeof options.root === 'string' && options.root !== '';
  const hasStore = typeof options.store === 'object' && options.store !== null;
  if (hasRoot === hasStore || (options.root !== undefined && !hasRoot))
    throw new LiveError(
      'invalid_request',
      'openConversationHub needs exactly one of { root } (a non-empty path) and { store }',
    );
  return new ConversationHub(options);
}

/** The hub's token mode, checked (TJ-LIVE-058). */
function tokenMode(mode: TokenMode | undefined): TokenMode {
  if (mode === undefined) return 'durable';
  if (mode !== 'durable' && mode !== 'segments')
    throw new LiveError('invalid_request', `tokens must be 'durable' or 'segments', got ${String(mode).slice(0, 40)}`);
  return mode;
}
