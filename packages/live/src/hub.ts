import { isValidIdentifier } from '@turnjournal/reader/store-format';
import {
  type AcquireLockOptions,
  openSessionJournals,
  type SweepReport,
  sweepStoreTurnJournals,
} from '@turnjournal/writer';
import { type FileSystem, nodeFileSystem } from '@turnjournal/writer/file-system';
import { LiveError } from './errors.js';
import { type FanOut, InProcessFanOut } from './fanout.js';
import { type LiveClock, ProcessTime, systemClock } from './live-clock.js';
import { reservedSessionIdRefusal } from './reserved-session-ids.js';
import { type CloseOptions, LiveSession, type LiveSessionSettings } from './session.js';

/** Options of {@link openConversationHub}. */
export interface ConversationHubOptions {
  /** The store root: every session's journals live at the layout of spec §4.4 under it. */
  readonly root: string;
  /** The file-system layer; the real one by default. */
  readonly fs?: FileSystem;
  /**
   * The clocks (spec §18.6): `{ now, monotonic }`, or a wall clock alone (the monotonic one is then `performance.now`);
   * the system's by default. Records are stamped and aged by the wall clock as TJ-LIVE-031 and TJ-LIVE-032 bound it;
   * idle time and a subscriber's lag are measured on the monotonic clock.
   */
  readonly clock?: LiveClock | (() => number);
  /** The fan-out of "durable through seq" announcements; in-process by default. */
  readonly fanOut?: FanOut;
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
   * Most bytes the window of a session holds while live subscribers still read what it holds (TJ-LIVE-030; never less
   * than `ringBytes`): the memory bound of a burst; a subscriber that would need more is cut off. 64 MiB by default.
   */
  readonly subscriberLagBytes?: number;
  /** Longest a delta waits for its sync when no boundary comes first (TJ-LIVE-007); 20 ms by default. */
  readonly deltaFlushMs?: number;
  /** Delivery window (TJ-LIVE-015): finished runs older than this count as delivered (`expired`); 48 h by default. */
  readonly deliveryWindowMs?: number;
  /** A session with no active run and no subscriber is closed after this idle time; 5 minutes by default. */
  readonly idleCloseMs?: number;
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
  /** The turn-journal sweep (live sessions' files are skipped, TJ-RET-009), or its error. */
  readonly turns: SweepReport | { readonly error: string };
}

const HOUR = 3_600_000;

/**
 * The registry of live sessions of one store (seed 003's ConversationHub): {@link ConversationHub.session} gives the
 * one in-process owner of a session's journals, opened (and recovered) on first use and closed when idle.
 */
export class ConversationHub {
  /** The store root. */
  readonly root: string;
  readonly #options: ConversationHubOptions;
  readonly #settings: LiveSessionSettings;
  readonly #sessions = new Map<string, Promise<LiveSession>>();
  readonly #timers: ReturnType<typeof setInterval>[] = [];
  /** Sessions whose compaction the last retention pass left for a streaming run (see `runRetention`). */
  #deferred = new Set<string>();
  #closed = false;

  /** @internal use {@link openConversationHub}. */
  constructor(options: ConversationHubOptions) {
    this.root = options.root;
    this.#options = options;
    this.#settings = {
      fs: options.fs ?? nodeFileSystem,
      time: new ProcessTime(liveClock(options.clock)),
      fanOut: options.fanOut ?? new InProcessFanOut(),
      ringRecords: positive(options.ringRecords, 4096, 'ringRecords'),
      ringBytes: positive(options.ringBytes, 4 * 1024 * 1024, 'ringBytes'),
      subscriberLagMs: positive(options.subscriberLagMs, 30_000, 'subscriberLagMs'),
      subscriberLagBytes: positive(options.subscriberLagBytes, 64 * 1024 * 1024, 'subscriberLagBytes'),
      deltaFlushMs: positive(options.deltaFlushMs, 20, 'deltaFlushMs'),
      deliveryWindowMs: positive(options.deliveryWindowMs, 48 * HOUR, 'deliveryWindowMs'),
    };
    const idle = positive(options.idleCloseMs, 5 * 60_000, 'idleCloseMs');
    this.#every(Math.max(1000, Math.floor(idle / 2)), () => this.#closeIdle(idle));
    if (options.retention !== false) {
      const interval = positive(options.retention?.intervalMs, HOUR, 'retention.intervalMs');
      this.#every(interval, () => this.runRetention());
    }
  }

  /** The fan-out sessions announce on: listen to it to learn that a session is durable through a seq. */
  get fanOut(): FanOut {
    return this.#settings.fanOut;
  }

  /** The session `sessionId`, opened on first use: its journals are locked, a crash's leftovers recovered. */
  session(sessionId: string): Promise<LiveSession> {
    if (this.#closed) return Promise.reject(new LiveError('session_closed', 'the hub is closed'));
    if (typeof sessionId !== 'string' || !isValidIdentifier(sessionId))
      return Promise.reject(
        new LiveError('invalid_request', `the session id ${JSON.stringify(String(sessionId)).slice(0, 80)} is invalid`),
      );
    const reserved = reservedSessionIdRefusal(sessionId);
    if (reserved !== null) return Promise.reject(reserved);
    const existing = this.#sessions.get(sessionId);
    if (existing !== undefined) {
      return existing.then(async (session) => {
        if (!session.retired && this.#sessions.get(sessionId) === existing) {
          session.touch();
          return session;
        }
        if (this.#sessions.get(sessionId) === existing) this.#sessions.delete(sessionId);
        // A session closing, closed or failed is not handed out (its calls would be refused): it is let go, its
        // locks released, and opened again, which recovers what its files hold.
        await session.close().catch(() => undefined);
        return this.session(sessionId);
      });
    }
    const opening = this.#open(sessionId).catch((error: unknown) => {
      throw reopenFailure(sessionId, error);
    });
    this.#sessions.set(sessionId, opening);
    opening.catch(() => {
      if (this.#sessions.get(sessionId) === opening) this.#sessions.delete(sessionId);
    });
    return opening;
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
    const windowMs = this.#options.retention === false ? 48 * HOUR : (this.#options.retention?.windowMs ?? 48 * HOUR);
    const sessions: RetentionReport['sessions'][number][] = [];
    const deferred = new Set<string>();
    for (const [sessionId, opening] of [...this.#sessions]) {
      try {
        const session = await opening;
        if (session.retired) continue;
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
        sessions.push({ sessionId, error: error instanceof Error ? error.message : String(error) });
      }
    }
    this.#deferred = deferred;
    let turns: RetentionReport['turns'];
    try {
      turns = await sweepStoreTurnJournals(this.root, {
        retentionSeconds: windowMs / 1000,
        clock: () => this.#settings.time.now(),
        fs: this.#settings.fs,
      });
    } catch (error) {
      turns = { error: error instanceof Error ? error.message : String(error) };
    }
    return { sessions, turns };
  }

  /**
   * Closes every session and stops the hub's timers. An active run is cancelled with reason `server_shutdown`
   * (`runs: 'cancel'`, the default), or waited for (`runs: 'wait'`), never left for the next start to close as a
   * crash (TJ-LIVE-036).
   */
  async close(options: CloseOptions = {}): Promise<void> {
    const runs = options.runs ?? 'cancel';
    if (runs !== 'cancel' && runs !== 'wait')
      throw new LiveError('invalid_request', `runs must be 'cancel' or 'wait', got ${String(runs)}`);
    this.#closed = true;
    for (const timer of this.#timers) clearInterval(timer);
    const sessions = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.allSettled(sessions.map(async (opening) => (await opening).close(options)));
  }

  async #open(sessionId: string): Promise<LiveSession> {
    const stampRef: { value: number | undefined } = { value: undefined };
    const time = this.#settings.time;
    const journals = await openSessionJournals({
      root: this.root,
      sessionId,
      eventDurability: 'none',
      turnDurability: 'group',
      fs: this.#settings.fs,
      clock: () => stampRef.value ?? time.stamp(),
      ...(this.#options.checkpointInterval === undefined
        ? {}
        : { checkpointInterval: this.#options.checkpointInterval }),
      ...(this.#options.lock === undefined ? {} : { lock: this.#options.lock }),
    });
    try {
      return await LiveSession.open(sessionId, journals, this.#settings, stampRef);
    } catch (error) {
      await journals.close().catch(() => undefined);
      throw error;
    }
  }

  async #closeIdle(idleMs: number): Promise<void> {
    // Monotonic: a step of the wall clock neither closes a session early nor keeps it and its locks open (TJ-LIVE-033).
    const now = this.#settings.time.monotonic();
    for (const [sessionId, opening] of [...this.#sessions]) {
      const session = await opening.catch(() => undefined);
      if (session === undefined) continue;
      const idle =
        session.retired ||
        (session.activeRequestId === undefined && session.subscriberCount === 0 && now - session.lastUsed > idleMs);
      if (!idle) continue;
      if (this.#sessions.get(sessionId) === opening) this.#sessions.delete(sessionId);
      await session.close().catch(() => undefined);
    }
  }

  #every(ms: number, task: () => Promise<unknown>): void {
    const timer = setInterval(() => {
      task().catch(() => undefined);
    }, ms);
    timer.unref();
    this.#timers.push(timer);
  }
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
  if (typeof options !== 'object' || options === null || typeof options.root !== 'string' || options.root === '')
    throw new LiveError('invalid_request', 'openConversationHub needs { root }');
  return new ConversationHub(options);
}
