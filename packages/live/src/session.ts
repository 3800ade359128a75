// Over 450 lines: the facade of a live session — its documented public API, the run intents `LiveRun` calls and the
// subscription source. Appends, group commits and delivery are in commit-pipeline.ts, restart recovery in
// session-recovery.ts; what is left is mostly the public API's documentation.
import { isValidIdentifier } from '@turnjournal/reader/store-format';
import type { EventLog, EventLogAck, EventLogCompaction, SessionJournals, TurnJournal } from '@turnjournal/writer';
import { deferCheckpoints, messageCount, oversizeRefusal } from '@turnjournal/writer/_internals';
import { CommitPipeline } from './commit-pipeline.js';
import { DiskReader } from './disk-reader.js';
import { LiveError } from './errors.js';
import { Listening, type LiveListener } from './fanout-listener.js';
import type { FollowerSession } from './follower-session.js';
import { LiveRun } from './live-run.js';
import {
  type ConversationView,
  type LiveEvent,
  type LiveRecord,
  type LiveRunStatus,
  type LiveTokenEvent,
  SEGMENT_CHUNK_CHARS,
  type TokenMode,
} from './records.js';
import { RecordRing } from './ring.js';
import { grownSegmentBytes, type OpenSegment } from './segment-bound.js';
import { SegmentText } from './segment-text.js';
import type {
  AckOptions,
  FinishOptions,
  LiveRunInfo,
  LiveSessionSettings,
  SendInput,
  SendResult,
  SubscribeOptions,
} from './session-inputs.js';
import { recoverSession } from './session-recovery.js';
import { openSubscription, type Subscription, type SubscriptionSource } from './subscription.js';
import { ViewFold } from './view-fold.js';

export { LiveRun } from './live-run.js';
export type {
  AckOptions,
  FinishOptions,
  LiveRunInfo,
  LiveSessionSettings,
  SendInput,
  SendResult,
  SubscribeOptions,
} from './session-inputs.js';

/** Members of the user message the session writes itself; `SendInput.messageFields` cannot set them. */
const OWN_USER_MESSAGE_MEMBERS = new Set(['role', 'content', 'id', 'request_id', 'attachments']);

/** A private extension type (spec §9.2, TJ-COMPAT-007). */
const EXTENSION_TYPE = /^x\.[A-Za-z0-9_-]+\.[A-Za-z0-9_.-]+$/;

interface ActiveState {
  readonly requestId: string;
  /** The token mode the run started in, kept for the whole run (TJ-LIVE-058) whatever the session's later mode. */
  readonly tokens: TokenMode;
  /** Aborted when the run is cancelled by id or by the server's shutdown: what the worker's `run.signal` is. */
  readonly abort: AbortController;
  /** Settles once the run's finishing record is durable or the session ended (what a draining close waits for). */
  readonly finished: { promise: Promise<void>; resolve: () => void };
  segment: OpenSegment | undefined;
  /**
   * `segments` mode (TJ-LIVE-059): how much of the open segment's text is written as `chat.delta` records, and
   * whether its `assistant.segment.started` is (it is written with the first of them).
   */
  written: number;
  segmentWritten: boolean;
  /** `segments` mode: the open segment's text not written yet (at most about {@link SEGMENT_CHUNK_CHARS}). */
  tail: string;
  /**
   * The open segment's last tokens (about {@link TOKEN_TAIL_CHARS} of text) and where each ends in its text, for
   * subscribers (TJ-LIVE-060): one that is nearly caught up takes the text after its offset without copying the
   * whole segment (slicing the segment's text flattened it at every token); one further behind, or new, takes a
   * slice of the whole text once.
   */
  parts: string[];
  ends: number[];
  segments: number;
  /** System messages the run inserted: the next one's id is `<request_id>.system<n + 1>`. */
  systems: number;
  assistantStarted: boolean;
  lastAssistantIndex: number | null;
}

/** Codes of the writers' errors that mean the journal wrote nothing more for the session (see `LiveSession.#answer`). */
const SESSION_FAILURES: ReadonlySet<string> = new Set([
  'write_failed',
  'append_cancelled',
  'writer_poisoned',
  'journal_unlinked',
]);

/** Text of the open segment's last tokens kept apart for subscribers (see `ActiveState.parts`): a bound on memory. */
const TOKEN_TAIL_CHARS = 64 * 1024;

/** The reason of the cancellation a server's shutdown writes for a run still active (TJ-LIVE-036). */
const SHUTDOWN_REASON = 'server_shutdown';

/** Options of {@link LiveSession.close} and {@link ConversationHub.close}. */
export interface CloseOptions {
  /**
   * What happens to an active run (TJ-LIVE-036): `cancel` (the default) cancels it with reason `server_shutdown`;
   * `wait` refuses new sends and waits until its worker ends it.
   */
  readonly runs?: 'cancel' | 'wait';
}

/** What an accepted delta answers: nothing is left to wait for (see `LiveSession._delta`). */
const ACCEPTED: Promise<void> = Promise.resolve();

function conflict(requestId: string, cause: unknown): LiveError {
  return new LiveError(
    'request_id_conflict',
    `request "${requestId}" was already sent with other content; a request id names one turn (TJ-LIVE-034): send a new message with a new request id`,
    cause === undefined ? undefined : { cause },
  );
}

/**
 * The one in-process owner of a session's turn journal and event log (seed 003's ConversationModel): the turn flow,
 * per-record durability, the window of recent records, subscribers, snapshots, acknowledgements and restart recovery.
 * Obtain it from {@link ConversationHub.session}.
 */
export class LiveSession implements SubscriptionSource {
  /** The session id. */
  readonly sessionId: string;
  /** What this process is to the session: its `owner` (see {@link FollowerSession} for the other role). */
  readonly role = 'owner' as const;
  readonly #journals: SessionJournals;
  readonly #log: EventLog;
  readonly #turns: TurnJournal;
  readonly #settings: LiveSessionSettings;
  /** The token mode of the runs started from now on (TJ-LIVE-058, TJ-LIVE-066). */
  #tokens: TokenMode;
  readonly #disk: DiskReader;
  readonly #ring: RecordRing;
  readonly #subscribers = new Set<Subscription<LiveEvent | LiveTokenEvent>>();
  /** Subscribers that take tokens (TJ-LIVE-060): a token wakes subscribers only when there are some. */
  #tokenSubscribers = 0;
  readonly #fold: ViewFold;
  /** Appends, group commits and deliveries (the pending list, the delta timer, the durable seq). */
  readonly #pipeline: CommitPipeline;
  #active: ActiveState | undefined;
  #starting: string | undefined;
  #startingSend: Promise<SendResult> | undefined;
  #closed = false;
  /** A close that waits for the active run is under way: no new run starts (see `close`). */
  #draining = false;
  /** The close under way or done (one for every caller of `close()`), or null. */
  #closing: Promise<void> | null = null;
  #exclusive: Promise<unknown> | null = null;
  /** What calls that append wait for while a compaction runs, and until the calls it held have run; or null. */
  #gate: Promise<void> | null = null;
  #lastUsed: number;

  /** @internal use {@link ConversationHub.session}. */
  constructor(
    sessionId: string,
    journals: SessionJournals,
    fold: ViewFold,
    settings: LiveSessionSettings,
    stampRef: { value: number | undefined },
  ) {
    this.sessionId = sessionId;
    this.#journals = journals;
    this.#log = journals.events;
    this.#turns = journals.turns;
    this.#fold = fold;
    this.#settings = settings;
    this.#tokens = settings.tokens;
    this.#disk = new DiskReader(() => settings.store.openReader({ family: 'event', sessionId }));
    this.#ring = new RecordRing(settings.ringRecords, settings.ringBytes, settings.subscriberLagBytes);
    this.#pipeline = new CommitPipeline(sessionId, journals.events, fold, this.#ring, settings, stampRef, (now) =>
      this.#retainFrom(now),
    );
    this.#lastUsed = settings.time.monotonic();
  }

  /**
   * @internal Opens a session on its journals: makes what the log holds durable, takes its runs from the writer's run index, then recovers what a
   * crash left open (TJ-LIVE-016, TJ-LIVE-017).
   */
  static async open(
    sessionId: string,
    journals: SessionJournals,
    settings: LiveSessionSettings,
    stampRef: { value: number | undefined },
  ): Promise<LiveSession> {
    const log = journals.events;
    // What a crashed process left in the OS is durable from now on (TJ-LIVE-008 for records read at open).
    await log.flush();
    // Every run of the log from the writer's run index (TJ-EVENT-020): opening reads the tail, not the log.
    const session = new LiveSession(sessionId, journals, new ViewFold(log.snapshot(), log.runs()), settings, stampRef);
    // Recovery writes only the small records it needs (TJ-LIVE-023): the checkpoint that falls due behind them repeats
    // the whole conversation, and on a disk that has just run full it made every reopen fail until there was room
    // for it. The first append after recovery reserves it.
    deferCheckpoints(log, true);
    try {
      await recoverSession({
        log,
        turns: journals.turns,
        fold: session.#fold,
        store: settings.store,
        sessionId,
        append: (type, payload) => session.#append(type, payload),
        durable: () => session.#durable(),
      });
    } finally {
      deferCheckpoints(log, false);
    }
    // Followers take the durable end from here on (TJ-LIVE-042): a mark a previous history left is replaced now.
    settings.fanOut.publish(sessionId, session.durableSeq);
    return session;
  }

  // ---- public API ----------------------------------------------------------------------------------------------

  /** The highest durable seq (what subscribers have been offered), -1 for an empty log. */
  get durableSeq(): number {
    return this.#pipeline.durableSeq;
  }

  /** True once closed. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * @internal True once the session delivers no more records: closed, or failed (its subscribers then end at the
   * last durable record, with their cursor, instead of waiting for records that will not come).
   */
  get ended(): boolean {
    return this.#closed || this.#pipeline.failure !== null;
  }

  /**
   * @internal True once the hub must not hand this session out any more: closing, closed or failed. The hub then
   * opens the session again, which recovers from what its files hold (the "reopen it" of `session_failed`).
   */
  get retired(): boolean {
    return this.#closing !== null || this.ended;
  }

  /** @internal The hub handed the session out: it counts as used, so the idle close does not take it meanwhile. */
  touch(): void {
    this.#lastUsed = this.#settings.time.monotonic();
  }

  /** The active run's id, or undefined. */
  get activeRequestId(): string | undefined {
    return this.#active?.requestId;
  }

  /**
   * The token mode of the runs this session starts from now on (spec §18.2, TJ-LIVE-066): the hub's `tokens`, or the
   * mode `hub.session(id, { tokens })` gave it. A run keeps the mode it started in (TJ-LIVE-058).
   */
  get tokens(): TokenMode {
    return this.#tokens;
  }

  /** @internal Sets the mode of the runs started from now on; an active run keeps its own. */
  useTokens(mode: TokenMode): void {
    this.#tokens = mode;
  }

  /**
   * @internal True while the hub must not close the session to make room (TJ-LIVE-065): a run is active or starting,
   * or a subscriber is attached.
   */
  get busy(): boolean {
    return this.#active !== undefined || this.#startingSend !== undefined || this.#subscribers.size > 0;
  }

  /** Subscribers currently attached. */
  get subscriberCount(): number {
    return this.#subscribers.size;
  }

  /** @internal What the window of recent records holds now: its memory, bounded as TJ-LIVE-030 says. */
  get windowUsage(): { readonly records: number; readonly bytes: number } {
    return { records: this.#ring.size, bytes: this.#ring.bytes };
  }

  /** @internal When the session was last used, on the monotonic clock (ms), for the hub's idle close. */
  get lastUsed(): number {
    return this.#lastUsed;
  }

  /**
   * Submits a user turn and starts its run (seeds 000 + 003): appends `submitted` to the turn journal (durable), then
   * `chat.started` and the user message to the event log (durable), then `worker_started`, and returns the run for
   * the worker to stream. A `requestId` the session already holds is a retry (TJ-LIVE-002): nothing is written and
   * the existing run's status is returned, across restarts too. Refused with `run_active` while another run is active.
   */
  async send(input: SendInput): Promise<SendResult> {
    this.#usable();
    if (typeof input !== 'object' || input === null)
      throw new LiveError('invalid_request', 'send needs an input object');
    const { requestId, content } = input;
    if (typeof requestId !== 'string' || !isValidIdentifier(requestId))
      throw new LiveError(
        'invalid_request',
        `the request id ${JSON.stringify(String(requestId)).slice(0, 80)} is not a valid identifier (it is the turn id too, TJ-LIVE-001)`,
      );
    if (typeof content !== 'string') throw new LiveError('invalid_request', 'content must be a string');
    const fields = input.messageFields;
    if (fields !== undefined) {
      if (typeof fields !== 'object' || fields === null || Array.isArray(fields))
        throw new LiveError('invalid_request', 'messageFields must be an object');
      const own = Object.keys(fields).find((key) => OWN_USER_MESSAGE_MEMBERS.has(key));
      if (own !== undefined)
        throw new LiveError('invalid_request', `messageFields cannot set "${own}": the session writes it`);
    }
    const known = this.statusOf(requestId);
    if (known !== undefined) {
      await this.#sameSubmission(requestId, content, input);
      return { created: false, requestId, status: known };
    }
    if (this.#draining)
      throw new LiveError('session_closed', `session "${this.sessionId}" is shutting down; send the turn again later`);
    // The same request while its first send is still being written (a double click, a resend racing the first): a
    // retry, answered once the first is durable (TJ-LIVE-002); if the first failed, this one tries again.
    if (this.#starting === requestId && this.#startingSend !== undefined) {
      await settledOnly(this.#startingSend);
      return this.send(input);
    }
    const busy = this.#active?.requestId ?? this.#starting;
    if (busy !== undefined)
      throw new LiveError('run_active', `run "${busy}" is still active; finish it before sending another turn`);
    this.#starting = requestId;
    const started = this.#startSend(requestId, content, input);
    this.#startingSend = started;
    try {
      return await started;
    } finally {
      this.#starting = undefined;
      this.#startingSend = undefined;
    }
  }

  async #startSend(requestId: string, content: string, input: SendInput): Promise<SendResult> {
    const started: Record<string, unknown> = {
      request_id: requestId,
      content,
      ...(input.model === undefined ? {} : { model: input.model }),
    };
    const message: Record<string, unknown> = {
      message: {
        ...input.messageFields,
        role: 'user',
        content,
        id: `${requestId}.user`,
        request_id: requestId,
        ...(input.attachments === undefined ? {} : { attachments: input.attachments }),
      },
    };
    // A content the turn journal takes may still make the run's records too long for the log (the user message is
    // the longest of the three): refused before anything is written, like a boundary's records.
    for (const [i, [type, payload]] of (
      [
        ['chat.started', started],
        ['message_append', message],
      ] as const
    ).entries()) {
      const refusal = oversizeRefusal(this.#log, type, payload, 2 * (i + 1));
      if (refusal !== null) throw refusal;
    }
    // A refusal of `submitted` (an invalid model or attachment) wrote nothing: it is this request's answer, and the
    // session, which holds other clients' runs, goes on.
    const submitted = await this.#turnCall(
      this.#turns.submit({
        turnId: requestId,
        content,
        streamId: requestId,
        ...(input.attachments === undefined ? {} : { attachments: input.attachments }),
        ...(input.model === undefined ? {} : { model: input.model }),
      }),
    );
    if (!submitted.created) return { created: false, requestId, status: this.statusOf(requestId) ?? 'interrupted' };
    try {
      // A compaction (the hourly retention job) that began while `submitted` was written is waited for.
      for (let gate = this.#compaction(); gate !== null; gate = this.#compaction()) await gate;
      const writes = [this.#append('chat.started', started), this.#append('message_append', message)];
      let resolveFinished = (): void => undefined;
      const finished = new Promise<void>((resolve) => {
        resolveFinished = resolve;
      });
      const state: ActiveState = {
        requestId,
        tokens: this.#tokens,
        abort: new AbortController(),
        finished: { promise: finished, resolve: resolveFinished },
        segment: undefined,
        written: 0,
        segmentWritten: false,
        tail: '',
        parts: [],
        ends: [],
        segments: 0,
        systems: 0,
        assistantStarted: false,
        lastAssistantIndex: null,
      };
      this.#active = state;
      await Promise.all([...writes, this.#durable()]);
      await this.#turns.workerStarted(requestId);
      return {
        created: true,
        requestId,
        status: 'running',
        run: new LiveRun(this, requestId, state.abort.signal),
      };
    } catch (error) {
      // `submitted` is durable and the run's records are not all written: the session's state no longer follows
      // the log; reopening recovers the turn (TJ-LIVE-019).
      this.#pipeline.fail(error);
      throw this.#answer(error);
    }
  }

  /**
   * Refuses a submission of a known `requestId` whose content is not the one submitted first (TJ-LIVE-034), as the
   * turn journal refuses a turn id submitted again with other content (TJ-TURN-003): answering it as a retry would
   * drop the user's new message. The turn journal decides while it holds the turn (its `submit` writes nothing for a
   * retry); once a sweep removed the turn, the user message the event log committed for the run does.
   */
  async #sameSubmission(requestId: string, content: string, input: SendInput): Promise<void> {
    if (this.#turns.stateOf(requestId) !== undefined) {
      try {
        await this.#turns.submit({
          turnId: requestId,
          content,
          streamId: requestId,
          ...(input.attachments === undefined ? {} : { attachments: input.attachments }),
          ...(input.model === undefined ? {} : { model: input.model }),
        });
        return;
      } catch (error) {
        const code = (error as { code?: unknown } | null)?.code;
        if (code === 'turn_id_conflict') throw conflict(requestId, error);
        // An orphan turn (events without `submitted`) cannot be compared here: the event log decides below.
        if (code !== 'illegal_transition') throw this.#answer(error);
      }
    }
    const id = `${requestId}.user`;
    const message = this.#fold.messages.find(
      (candidate) => (candidate as { id?: unknown }).id === id && candidate.role === 'user',
    );
    if (message !== undefined && message.content !== content) throw conflict(requestId, undefined);
  }

  /**
   * Cancels the active run `requestId` (TJ-LIVE-035): its worker's `run.signal` aborts, its open segment is committed
   * as partial, `chat.cancelled` with `reason` is appended (durable), and its turn is interrupted with `reason`; the
   * worker's later calls on the run are refused with `run_not_active`. Refused with `unknown_run` when the session
   * holds no such run and with `run_not_active` when it has finished already. A run whose send is still being written
   * is cancelled once it started.
   */
  async cancel(requestId: string, reason = 'cancelled'): Promise<void> {
    this.#usable();
    if (typeof requestId !== 'string') throw new LiveError('invalid_request', 'cancel needs a request id string');
    if (typeof reason !== 'string' || reason === '')
      throw new LiveError('invalid_request', 'the reason of a cancellation is a non-empty string');
    if (this.#starting === requestId && this.#startingSend !== undefined) await settledOnly(this.#startingSend);
    const active = this.#active;
    if (active === undefined || active.requestId !== requestId) {
      if (this.statusOf(requestId) === undefined)
        throw new LiveError('unknown_run', `the session has no run "${requestId}"`);
      throw new LiveError('run_not_active', `run "${requestId}" has finished; there is nothing to cancel`);
    }
    active.abort.abort(new LiveError('run_not_active', `run "${requestId}" was cancelled (${reason})`));
    await this._finish(requestId, 'cancelled', undefined, reason);
  }

  /**
   * What the session knows of the run `requestId` of its log — status, the seqs of its `chat.started` and finishing
   * record, whether it was acknowledged — or undefined when the log has no such run (a turn without a run included).
   */
  runInfo(requestId: string): LiveRunInfo | undefined {
    const run = this.#fold.runs.get(requestId);
    if (run === undefined) return undefined;
    return {
      requestId,
      status: this.#active?.requestId === requestId ? 'running' : (run.finish ?? 'running'),
      startedSeq: run.startedSeq,
      finishedSeq: run.finishedSeq,
      acked: run.acked,
    };
  }

  /** The status of the run (or turn) `requestId`, or undefined when the session holds neither. */
  statusOf(requestId: string): LiveRunStatus | undefined {
    if (this.#active?.requestId === requestId) return 'running';
    const run = this.#fold.runs.get(requestId);
    if (run !== undefined) return run.finish ?? 'running';
    const turn = this.#turns.stateOf(requestId);
    if (turn === undefined) return undefined;
    return turn === 'completed' ? 'done' : turn === 'interrupted' ? 'interrupted' : 'running';
  }

  /**
   * Streams the log from a cursor (spec §18.3): every durable record with `seq > after`, in order, once, from the
   * window of recent records or the store, then live; a snapshot when the records are compacted away or the cursor
   * is ahead; a `reset` snapshot first when `epoch` is given and is not the log's (the cursor belongs to another
   * history of the session, TJ-LIVE-020); `cut_off` with the cursor when a live subscriber falls out of the window.
   */
  subscribe(options: SubscribeOptions & { readonly tokens: true }): Subscription<LiveEvent | LiveTokenEvent>;
  subscribe(options?: SubscribeOptions): Subscription;
  subscribe(options: SubscribeOptions = {}): Subscription<LiveEvent | LiveTokenEvent> {
    this.#usable();
    const subscription = openSubscription<LiveEvent | LiveTokenEvent>(this, options, this.#fold.epoch);
    this.#subscribers.add(subscription);
    if (subscription.wantsTokens) this.#tokenSubscribers += 1;
    this.#lastUsed = this.#settings.time.monotonic();
    return subscription;
  }

  /**
   * What {@link subscribe} streams, delivered by callback: `listener` gets every event once, in order, the records
   * that are ready at once (a commit's, a batch read from the store) in one call. Observe the returned `done`.
   */
  listen(options: SubscribeOptions, listener: LiveListener): Listening {
    return new Listening(this.subscribe(options), listener);
  }

  /**
   * Seed 003's ConversationView (spec §18.4), consistent with its `lastSeq` (TJ-LIVE-013), with the finished runs
   * `clientId` has not acknowledged (any client's ack counts when none is named).
   */
  snapshot(options: { readonly clientId?: string } = {}): ConversationView {
    return this.#fold.view(
      this.sessionId,
      options.clientId,
      this.#settings.time.now(),
      this.#settings.deliveryWindowMs,
    );
  }

  /**
   * Records that a client received a finished run through its finishing record (spec §6.4): appends `delivery.ack`,
   * durable. Refused for an unknown or unfinished run, for a `throughSeq` below its finishing record
   * (`ack_before_finish`) and for one beyond the last durable record, which no client can have received
   * (`ack_beyond_log`; TJ-LIVE-014).
   */
  async ack(requestId: string, options: AckOptions = {}): Promise<void> {
    // Awaited only while a compaction holds calls, and on its gate itself: in order with the deltas held.
    for (let gate = this.#compaction(); gate !== null; gate = this.#compaction()) await gate;
    this.#usable();
    const run = this.#fold.runs.get(requestId);
    if (run === undefined) throw new LiveError('unknown_run', `the session has no run "${requestId}"`);
    if (run.finishedSeq === null)
      throw new LiveError('run_not_finished', `run "${requestId}" has not finished; acknowledge it after its end`);
    const { throughSeq, clientId } = options;
    if (throughSeq !== undefined && !Number.isSafeInteger(throughSeq))
      throw new LiveError(
        'invalid_request',
        `throughSeq must be an integer seq, got ${String(throughSeq).slice(0, 40)}`,
      );
    // Written into every ack of the client: unbounded, 20 acks of 900 KB made 18 MB of log (TJ-LIVE-057).
    if (clientId !== undefined && (typeof clientId !== 'string' || clientId.length === 0 || clientId.length > 128))
      throw new LiveError('invalid_request', 'clientId must be a string of 1 to 128 characters (TJ-LIVE-057)');
    if (throughSeq !== undefined && throughSeq < run.finishedSeq)
      throw new LiveError(
        'ack_before_finish',
        `through_seq ${throughSeq} is below the finishing record ${run.finishedSeq} of run "${requestId}" (TJ-LIVE-014)`,
      );
    // A client receives only durable records (TJ-LIVE-008): a through_seq past the last of them names a record it
    // cannot have seen — a client's bug or a hostile client — and would mark a receipt that never happened.
    if (throughSeq !== undefined && throughSeq > this.#pipeline.durableSeq)
      throw new LiveError(
        'ack_beyond_log',
        `through_seq ${throughSeq} is beyond the last durable record ${this.#pipeline.durableSeq} of session "${this.sessionId}"; a client cannot have received it (TJ-LIVE-014)`,
      );
    // A receipt the log holds already (this client's, or any for an anonymous ack) changes no view: a repeat is a
    // no-op, and one racing an ack still being written waits for that one (TJ-LIVE-056).
    if (clientId === undefined ? run.acked : run.ackedBy.has(clientId)) return;
    const key = `${requestId}\u0000${clientId ?? ''}`;
    const inFlight = this.#acking.get(key);
    if (inFlight !== undefined) return inFlight;
    const acking = this.#writeAck(requestId, clientId, throughSeq).finally(() => this.#acking.delete(key));
    this.#acking.set(key, acking);
    return acking;
  }

  readonly #acking = new Map<string, Promise<void>>();

  async #writeAck(requestId: string, clientId: string | undefined, throughSeq: number | undefined): Promise<void> {
    // The append's own promise is awaited too: a record the log refuses resolves no ack and leaves nothing unhandled.
    const written = this.#append('delivery.ack', {
      request_id: requestId,
      ...(clientId === undefined ? {} : { client_id: clientId }),
      ...(throughSeq === undefined ? {} : { through_seq: throughSeq }),
    });
    await Promise.all([written, this.#durable()]).catch(this.#rethrowAnswer);
  }

  /**
   * Compacts the event log (spec §14.2) with the session's delivery window (TJ-LIVE-015): appends wait meanwhile; the
   * window of recent records is kept (seqs do not change, TJ-RET-14).
   */
  async compact(options: { readonly retentionSeconds?: number } = {}): Promise<EventLogCompaction> {
    this.#usable();
    return this.#runExclusive(async () => {
      await this.#durable();
      const result = await this.#log.compact({
        ...(options.retentionSeconds === undefined ? {} : { retentionSeconds: options.retentionSeconds }),
        // Finished runs nobody acknowledged within the session's delivery window no longer block it (TJ-RET-018).
        deliveryWindowSeconds: this.#settings.deliveryWindowMs / 1000,
        now: this.#settings.time.now(),
      });
      await this.#disk.reopen();
      return result;
    });
  }

  /** Makes everything appended durable and delivers it. */
  flush(): Promise<void> {
    return this.#durable().catch(this.#rethrowAnswer);
  }

  /**
   * Closes the session: ends its active run first (TJ-LIVE-036) — `runs: 'cancel'` (the default) cancels it with
   * reason `server_shutdown` and aborts its `run.signal`; `runs: 'wait'` refuses new sends and waits until its worker
   * ends it — then flushes, ends every subscription, closes both journals and releases their locks.
   */
  close(options: CloseOptions = {}): Promise<void> {
    const runs = options.runs ?? 'cancel';
    if (runs !== 'cancel' && runs !== 'wait')
      return Promise.reject(new LiveError('invalid_request', `runs must be 'cancel' or 'wait', got ${String(runs)}`));
    // Every caller waits for the same close: one that returned while another was still closing the journals let the
    // hub open the session again while the locks were held.
    const failedBefore = this.#pipeline.failure !== null;
    this.#closing ??= this.#endRuns(runs).then(() => this.#close(failedBefore));
    return this.#closing;
  }

  async #endRuns(runs: 'cancel' | 'wait'): Promise<void> {
    this.#draining = true;
    if (this.#startingSend !== undefined) await settledOnly(this.#startingSend);
    for (let active = this.#active; active !== undefined && !this.ended; active = this.#active) {
      if (runs === 'wait') {
        // A failure of the session wakes this too: its run then ends with the next open's recovery.
        await Promise.race([active.finished.promise, this.#pipeline.changed()]);
        continue;
      }
      active.abort.abort(new LiveError('session_closed', `session "${this.sessionId}" is shutting down`));
      try {
        await this._finish(active.requestId, 'cancelled', undefined, SHUTDOWN_REASON);
      } catch (error) {
        // The worker ended the run meanwhile (`run_not_active`), or the session failed: recovery on the next open
        // closes it (TJ-LIVE-016). Anything else is a defect and is not hidden.
        const code = (error as { code?: unknown } | null)?.code;
        if (code !== 'run_not_active' && code !== 'session_failed' && !this.ended) throw error;
        if (this.#active === active) break;
      }
    }
  }

  /**
   * Flushes, ends the subscriptions and closes the journals. `failedBefore`: the session had failed before close was
   * called (its calls were refused with that failure and the hub reported it); a failure during close itself (the
   * cancellation's sync, the last sync) loses records accepted before close, so close rejects with it.
   */
  async #close(failedBefore: boolean): Promise<void> {
    this.#pipeline.stop();
    // Records accepted before close (deltas are acknowledged before their sync) are made durable here: a failure of
    // that last sync loses them, so close rejects with it, once the journals are closed and their locks released.
    let lastSync: { error: unknown } | undefined;
    if (this.#pipeline.failure === null)
      await this.#durable().catch((error: unknown) => {
        lastSync = { error };
      });
    this.#closed = true;
    this.#pipeline.wakeAll();
    for (const subscription of [...this.#subscribers]) subscription.close();
    await this.#disk.close();
    await this.#settings.store.channel.release(this.sessionId).catch((error: unknown) => {
      this.#settings.onFailure?.(this.sessionId, error);
    });
    const earlier = this.#pipeline.failure;
    await this.#journals.close().catch((error: unknown) => {
      // The journals refuse their close with the failure that already failed the session, or its cause (its calls were
      // refused with it and the hub reported it): not a second failure.
      if (lastSync === undefined && earlier !== null && sameFailure(error, earlier)) return;
      if (lastSync === undefined || error === lastSync.error) throw error;
      throw new AggregateError([lastSync.error, error], `${this.sessionId}: the last sync and the close both failed`);
    });
    if (lastSync !== undefined) throw lastSync.error;
    if (!failedBefore && earlier !== null) throw earlier;
  }

  // ---- the run (called by LiveRun) ---------------------------------------------------------------------------------

  /**
   * @internal A delta is accepted — checked by the writer, given its seq, and in the pending list — before this
   * returns; the writer holds its line until the next sync (TJ-LIVE-007), so nothing is left to wait for: the answer
   * is an already resolved promise (while a compaction runs, one that resolves once the delta is accepted after it),
   * and a write that fails later fails the session.
   */
  _delta(requestId: string, text: string): Promise<void> {
    const gate = this.#compaction();
    if (gate !== null) return gate.then(() => this._delta(requestId, text));
    try {
      const active = this.#activeRun(requestId);
      if (typeof text !== 'string') throw new LiveError('invalid_request', 'a delta is a string');
      const durable = active.tokens === 'durable';
      let segment = active.segment;
      if (segment === undefined) {
        active.segments += 1;
        const messageId = `${requestId}.a${active.segments}`;
        // In `segments` mode the start is written with the segment's first text (TJ-LIVE-059).
        if (durable) {
          const opened = this.#openSegmentRecord(requestId, messageId);
          if (opened !== null) return opened.catch(this.#rethrowAnswer);
        }
        segment = { messageId, text: new SegmentText(), bytes: 0, exact: false };
        active.segment = segment;
        active.written = 0;
        active.segmentWritten = durable;
        active.tail = '';
        active.parts = [];
        active.ends = [];
        if (!active.assistantStarted) {
          active.assistantStarted = true;
          const index = messageCount(this.#log);
          this.#turns
            .assistantStarted(requestId, { assistantMessageIndex: index })
            .catch((error: unknown) => this.#pipeline.fail(error));
        }
      }
      // `#activeRun` checked the session a moment ago (`#usable`): what `#appendable` would do again (no compaction
      // started since the check above).
      const bytes = grownSegmentBytes(segment, requestId, text, this.#logPath);
      if (typeof bytes !== 'number') throw bytes;
      if (durable) {
        const refused = this.#pipeline.appendDelta(requestId, segment.messageId, text, this.#settings.time.stamp());
        if (refused !== null) return refused.catch(this.#rethrowAnswer);
        segment.text.append(text);
      } else {
        const refused = this.#segmentText(active, segment, text);
        if (refused !== null) return refused.catch(this.#rethrowAnswer);
      }
      segment.bytes = bytes;
      if (text !== '') {
        const { parts, ends } = active;
        const end = segment.text.length;
        parts.push(text);
        ends.push(end);
        // Past twice the tail, the older half goes at once (amortised: no shift per token).
        if (end - ((ends[0] as number) - (parts[0] as string).length) > 2 * TOKEN_TAIL_CHARS) {
          let drop = 0;
          while ((ends[drop] as number) <= end - TOKEN_TAIL_CHARS) drop += 1;
          parts.splice(0, drop);
          ends.splice(0, drop);
        }
        // Subscribers get the token now, not when a sync made it durable (TJ-LIVE-060).
        if (this.#tokenSubscribers > 0) this.#pipeline.wakeAll();
      }
      return ACCEPTED;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * @internal An extension record of the run (spec §9.2): held and made durable like a delta (TJ-LIVE-007), and,
   * being ignored for derivation (TJ-COMPAT-006), it neither opens nor closes a segment. Resolves once accepted.
   */
  _extension(requestId: string, type: string, payload: Readonly<Record<string, unknown>>): Promise<void> {
    const gate = this.#compaction();
    if (gate !== null) return gate.then(() => this._extension(requestId, type, payload));
    try {
      this.#activeRun(requestId);
      if (typeof type !== 'string' || !EXTENSION_TYPE.test(type))
        throw new LiveError(
          'invalid_request',
          `an extension record's type is x.<org>.<name> (TJ-COMPAT-007), got ${JSON.stringify(String(type)).slice(0, 80)}`,
        );
      if (typeof payload !== 'object' || payload === null || Array.isArray(payload))
        throw new LiveError('invalid_request', 'an extension record needs a payload object');
      // -1: the caller's payload is not known to be flat; the pipeline copies it through JSON for the window.
      return this.#appendHeld(type, { ...payload, request_id: requestId }, -1) ?? ACCEPTED;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * @internal Closes the open segment, appends `records` in order, and waits until they are durable. A tool result
   * and its message are written together or not at all (TJ-LIVE-004): a record after the first that the log would
   * refuse for its size refuses the boundary before anything is appended, the open segment's message included (a
   * `message_append` is about a hundred bytes longer than its `tool.result`, so an output near the line limit could
   * pass as the one and not as the other); and the records after one the log refuses are not appended (a
   * `tool.result` whose output is not a string was refused while its more lenient message was written). The first
   * record needs no check ahead: nothing of the group precedes it.
   */
  async _boundary(requestId: string, records: readonly (readonly [string, Record<string, unknown>])[]): Promise<void> {
    // Awaited only while a compaction holds calls, and on its gate itself: in order with the deltas held.
    for (let gate = this.#compaction(); gate !== null; gate = this.#compaction()) await gate;
    const active = this.#activeRun(requestId);
    for (let i = 1; i < records.length; i += 1) {
      const [type, payload] = records[i] as readonly [string, Record<string, unknown>];
      // Seqs only gain digits further on: 2 × (i + 2) places bounds what the segment's message and a checkpoint
      // behind each record can put before this one.
      const refusal = oversizeRefusal(this.#log, type, payload, 2 * (i + 2));
      if (refusal !== null) throw refusal;
    }
    this.#closeSegment(active, false);
    const writes: Promise<unknown>[] = [];
    let refused = false;
    for (const [type, payload] of records) {
      const before = this.#log.lastSeq;
      writes.push(this.#append(type, payload));
      // A refusal reserves nothing (see `CommitPipeline.append`).
      if (this.#log.lastSeq === before) {
        refused = true;
        break;
      }
    }
    if (refused) {
      writes.push(this.#durable());
      await Promise.all(writes).catch(this.#rethrowAnswer);
      return;
    }
    // Every record reserved: a write of theirs that fails fails the pipeline with its error (`CommitPipeline.append`)
    // before the sync that covers them can deliver them, and that sync then rejects with it — so the sync answers for
    // the writes too, without a promise that gathers them.
    try {
      await this.#durable();
    } catch (error) {
      throw this.#answer(error);
    }
  }

  /**
   * @internal A system message of the run (TJ-LIVE-062): a boundary whose record is the message, so the open segment
   * is committed before it and the next delta opens a new one.
   */
  async _system(requestId: string, text: string): Promise<void> {
    if (typeof text !== 'string') throw new LiveError('invalid_request', 'a system message is a string');
    const active = this.#activeRun(requestId);
    // Counted before the write: two calls made at once get two ids (a refused one leaves its number unused).
    active.systems += 1;
    const id = `${requestId}.system${active.systems}`;
    await this._boundary(requestId, [
      ['message_append', { message: { role: 'system', content: text, id, request_id: requestId } }],
    ]);
  }

  /** @internal Ends the run: segment, finishing record (durable), then the turn's terminal event (TJ-LIVE-005). */
  async _finish(
    requestId: string,
    how: 'done' | 'error' | 'cancelled',
    error?: { readonly message: string; readonly name?: string; readonly code?: string },
    reason?: string,
    options: FinishOptions = {},
  ): Promise<void> {
    // Awaited only while a compaction holds calls, and on its gate itself: in order with the deltas held.
    for (let gate = this.#compaction(); gate !== null; gate = this.#compaction()) await gate;
    const active = this.#activeRun(requestId);
    const extra = this.#finishMessage(requestId, options);
    this.#closeSegment(active, how !== 'done');
    if (extra !== undefined) {
      const before = this.#log.lastSeq;
      const written = this.#append('message_append', extra);
      // Refused (what the size check cannot see, e.g. a value JSON cannot carry): the run stays active.
      if (this.#log.lastSeq === before) await written;
    }
    const before = this.#log.lastSeq;
    let finished: Promise<EventLogAck>;
    if (how === 'done') finished = this.#append('chat.done', { request_id: requestId });
    else if (how === 'error')
      finished = this.#append('chat.error', { request_id: requestId, error: error ?? { message: 'error' } });
    else finished = this.#append('chat.cancelled', { request_id: requestId, reason: reason ?? 'cancelled' });
    // A finishing record the log refused (a caller's error object or reason JSON cannot carry) reserved nothing: the
    // run stays active, for the caller to end it with a valid one; the refusal is the call's answer.
    if (this.#log.lastSeq === before) await finished.catch(this.#rethrowAnswer);
    this.#active = undefined;
    try {
      await Promise.all([finished, this.#durable()]).catch(this.#rethrowAnswer);
      if (how === 'done')
        await this.#turnCall(this.#turns.complete(requestId, { assistantMessageIndex: active.lastAssistantIndex }));
      else await this.#turnCall(this.#turns.interrupt(requestId, how === 'error' ? 'error' : (reason ?? 'cancelled')));
    } finally {
      active.finished.resolve();
    }
  }

  /** The `message_append` payload of a finishing call's `options.message`, checked (refused before any write). */
  #finishMessage(requestId: string, options: FinishOptions): Record<string, unknown> | undefined {
    if (typeof options !== 'object' || options === null)
      throw new LiveError('invalid_request', 'the options of a finishing call must be an object');
    const message = options.message;
    if (message === undefined) return undefined;
    if (typeof message !== 'object' || message === null || typeof message.role !== 'string')
      throw new LiveError('invalid_request', 'options.message must be an object with a string role');
    const payload = { message: { ...message, request_id: requestId } };
    // The segment's message and the finishing record may come before it: 2 × 3 places bound their seqs.
    const refusal = oversizeRefusal(this.#log, 'message_append', payload, 6);
    if (refusal !== null) throw refusal;
    return payload;
  }

  // ---- SubscriptionSource ----------------------------------------------------------------------------------------

  /** @internal */
  fromRing(seq: number): LiveRecord | undefined {
    return this.#ring.get(seq);
  }

  /** @internal */
  fromDisk(
    after: number,
    through: number,
    limit: number,
  ): Promise<{ kind: 'records'; records: readonly LiveRecord[] } | { kind: 'compacted' }> {
    const read = async () => this.#disk.readAfter(after, through, limit);
    return this.#exclusive === null ? read() : this.#exclusive.then(read, read);
  }

  /** @internal */
  snapshotEvent(reason: 'compacted' | 'ahead' | 'reset'): { event: LiveEvent; seq: number } {
    const view = this.snapshot();
    return { event: { kind: 'snapshot', reason, view }, seq: view.lastSeq ?? -1 };
  }

  /** @internal The open segment's text as the worker produced it, after `offset` of segment `messageId` (TJ-LIVE-060). */
  tokensAfter(messageId: string, offset: number): LiveTokenEvent | undefined {
    const active = this.#active;
    const segment = active?.segment;
    if (active === undefined || segment === undefined) return undefined;
    const { parts, ends } = active;
    const from = segment.messageId === messageId ? offset : 0;
    const length = segment.text.length;
    if (length <= from) return undefined;
    const kept = parts.length === 0 ? length : (ends[0] as number) - (parts[0] as string).length;
    if (from < kept)
      return {
        kind: 'token',
        requestId: active.requestId,
        messageId: segment.messageId,
        offset: from,
        text: segment.text.toString().slice(from),
      };
    // The first token that ends after `from` (bisection: ends ascend).
    let low = 0;
    let high = ends.length - 1;
    while (low < high) {
      const middle = (low + high) >> 1;
      if ((ends[middle] as number) > from) high = middle;
      else low = middle + 1;
    }
    const first = parts[low] as string;
    const start = (ends[low] as number) - first.length;
    const text = first.slice(from - start) + parts.slice(low + 1).join('');
    return { kind: 'token', requestId: active.requestId, messageId: segment.messageId, offset: from, text };
  }

  /** @internal */
  changed(): Promise<void> {
    return this.#pipeline.changed();
  }

  /** @internal */
  detach(subscription: Subscription<LiveEvent | LiveTokenEvent>): void {
    if (this.#subscribers.delete(subscription) && subscription.wantsTokens) this.#tokenSubscribers -= 1;
    this.#lastUsed = this.#settings.time.monotonic();
  }

  // ---- internals -------------------------------------------------------------------------------------------------

  /**
   * The first seq a live subscriber still reading has not received, which the window keeps at this delivery
   * (TJ-LIVE-030); a live subscriber whose oldest missing record became durable more than the lag limit before `now`
   * (monotonic ms), or is no longer in the window, is cut off instead and holds nothing.
   */
  #retainFrom(now: number): number {
    let from = Number.POSITIVE_INFINITY;
    const durable = this.#pipeline.durableSeq;
    for (const subscription of this.#subscribers) {
      if (!subscription.streaming) continue;
      const next = subscription.cursor + 1;
      if (next <= durable) {
        const since = this.#ring.durableAt(next);
        if (since === undefined || now - since > this.#settings.subscriberLagMs) {
          subscription.cutOff();
          continue;
        }
      }
      if (next < from) from = next;
    }
    return from;
  }

  #usable(): void {
    if (this.#closed) throw new LiveError('session_closed', `session "${this.sessionId}" is closed`);
    const failure = this.#pipeline.failure;
    if (failure !== null) throw this.#failed(failure);
    this.#lastUsed = this.#settings.time.monotonic();
  }

  /**
   * The `session_failed` of a session that failed with `failure` (TJ-LIVE-024): what every call answers from then on,
   * with what to do, so that the caller who retries gets the answer it was told to expect.
   */
  #failed(failure: unknown): LiveError {
    const why = failure instanceof Error ? failure.message : String(failure);
    return new LiveError(
      'session_failed',
      `session "${this.sessionId}" failed (${why}); nothing more is written to it: get it again from hub.session(), which reopens it and recovers what its files hold (a run it had open is closed as cancelled, so send that turn again)`,
      { cause: failure },
    );
  }

  /**
   * What a call rejected with `error` answers (TJ-LIVE-024): once the session has failed, a write, sync or journal
   * failure (`write_failed`, `append_cancelled` with its "retry it", `writer_poisoned`, `journal_unlinked`) becomes
   * the session's `session_failed`, the answer a retry gets; a refusal of the call itself (an invalid record, an
   * illegal transition) and any error of a session that goes on pass through.
   */
  #answer(error: unknown): unknown {
    const failure = this.#pipeline.failure;
    if (failure === null || error instanceof LiveError) return error;
    const code = (error as { code?: unknown } | null)?.code;
    if (error !== failure && (typeof code !== 'string' || !SESSION_FAILURES.has(code))) return error;
    return this.#failed(failure);
  }

  readonly #rethrowAnswer = (error: unknown): never => {
    throw this.#answer(error);
  };

  #activeRun(requestId: string): ActiveState {
    this.#usable();
    const active = this.#active;
    if (active === undefined || active.requestId !== requestId)
      throw new LiveError('run_not_active', `run "${requestId}" is not the active run of "${this.sessionId}"`);
    return active;
  }

  /** Appends the held `assistant.segment.started` of segment `messageId`: null once accepted, else the refusal. */
  #openSegmentRecord(requestId: string, messageId: string): Promise<void> | null {
    return this.#appendHeld(
      'assistant.segment.started',
      { request_id: requestId, message_id: messageId },
      requestId.length + messageId.length + 32,
    );
  }

  /**
   * `segments` mode (TJ-LIVE-059): adds `text` to the open segment and writes no record for it unless the segment's
   * unwritten text now ends a paragraph (`\n\n`: written through the last one) or reaches
   * {@link SEGMENT_CHUNK_CHARS} (written whole), as one held `chat.delta` — preceded by the segment's start when it is
   * its first. Only the unwritten tail is kept apart and only the new text searched, so a long segment costs nothing
   * more per token. Null once accepted, else the refusal (the text is then not added).
   */
  #segmentText(active: ActiveState, segment: OpenSegment, text: string): Promise<void> | null {
    const tail = active.tail + text;
    let cut = 0;
    if (tail.length >= SEGMENT_CHUNK_CHARS) cut = tail.length;
    // A paragraph end may straddle the token's first character and the tail before it.
    else
      for (
        let at = tail.indexOf('\n\n', Math.max(0, active.tail.length - 1));
        at >= 0;
        at = tail.indexOf('\n\n', at + 1)
      )
        cut = at + 2;
    if (cut > 0) {
      if (!active.segmentWritten) {
        const opened = this.#openSegmentRecord(active.requestId, segment.messageId);
        if (opened !== null) return opened;
        active.segmentWritten = true;
      }
      const refused = this.#pipeline.appendDelta(
        active.requestId,
        segment.messageId,
        tail.slice(0, cut),
        this.#settings.time.stamp(),
      );
      if (refused !== null) return refused;
      active.written += cut;
    }
    active.tail = cut > 0 ? tail.slice(cut) : tail;
    segment.text.append(text);
    return null;
  }

  /** Commits the open segment as an assistant message (TJ-LIVE-004), marked partial when the run did not finish. */
  #closeSegment(active: ActiveState, partial: boolean): void {
    const segment = active.segment;
    if (segment === undefined) return;
    active.segment = undefined;
    if (segment.text.length === 0) return;
    active.lastAssistantIndex = messageCount(this.#log);
    this.#append('message_append', {
      message: {
        role: 'assistant',
        content: segment.text.toString(),
        id: segment.messageId,
        request_id: active.requestId,
        ...(partial ? { partial: true } : {}),
      },
    });
  }

  /**
   * A call of the turn journal whose refusal is the call's answer — unless the journal refuses every later call too
   * (`TurnJournal.poisoned`): then the session is failed with it, so that `hub.session()` reopens it (on a journal
   * created afresh when it was removed, TJ-DUR-036) instead of handing out a session whose every send fails.
   */
  async #turnCall<T>(call: Promise<T>): Promise<T> {
    try {
      return await call;
    } catch (error) {
      if (this.#turns.poisoned) this.#pipeline.fail(error);
      throw this.#answer(error);
    }
  }

  readonly #logPath = (): string => this.#log.path;

  /** Appends one record through the pipeline (see `CommitPipeline.append`) while the session is usable. */
  #append(type: string, payload: Record<string, unknown>): Promise<EventLogAck> {
    this.#appendable();
    return this.#pipeline.append(type, payload);
  }

  /** A held append (`size` as for `CommitPipeline.appendHeld`): null once accepted, else the refusal. */
  #appendHeld(type: string, payload: Record<string, unknown>, size: number): Promise<void> | null {
    this.#appendable();
    return this.#pipeline.appendHeld(type, payload, size);
  }

  /**
   * Null when no compaction runs and none held calls that have yet to run; otherwise what to wait for before
   * appending (compact()'s "appends wait meanwhile"). Everyone waits for the same promise, so the calls held run in
   * the order they were made (a delta before the tool record after it), and the gate stays shut until they have:
   * a call made meanwhile queues behind them. A refusal here made a worker's stream fail at the hourly retention job.
   */
  #compaction(): Promise<void> | null {
    if (this.#gate !== null) return this.#gate;
    const running = this.#exclusive;
    if (running === null) return null;
    const gate = running.then(
      () => undefined,
      () => undefined,
    );
    // Registered first, so it runs before the calls held: they find the gate open unless another compaction began.
    gate.then(() => {
      if (this.#gate === gate) this.#gate = null;
    });
    this.#gate = gate;
    return gate;
  }

  #appendable(): void {
    this.#usable();
    if (this.#exclusive !== null)
      throw new LiveError('invalid_request', 'the session is compacting; retry when compact() resolved');
  }

  /** Makes every record appended so far durable, then delivers it (group commit). */
  #durable(): Promise<void> {
    return this.#pipeline.durable();
  }

  async #runExclusive<T>(task: () => Promise<T>): Promise<T> {
    // After the running compaction and the calls it held (they were made first).
    for (let gate = this.#compaction(); gate !== null; gate = this.#compaction()) await gate;
    const running = task();
    this.#exclusive = running;
    try {
      return await running;
    } finally {
      this.#exclusive = null;
    }
  }
}

/** Whether `a` and `b` are one failure: the same error, or one the cause (at any depth) of the other. */
function sameFailure(a: unknown, b: unknown): boolean {
  const causes = (error: unknown): unknown[] => {
    const chain: unknown[] = [];
    for (let at = error; at !== undefined && at !== null && !chain.includes(at); at = (at as { cause?: unknown }).cause)
      chain.push(at);
    return chain;
  };
  return causes(a).includes(b) || causes(b).includes(a);
}

/**
 * Waits until `send` (a send another caller started) has settled. Its outcome, success or failure, is that caller's
 * answer and was delivered to it; the waiter only needs the session's state after it, so nothing is dropped here.
 */
async function settledOnly(send: Promise<unknown>): Promise<void> {
  await Promise.allSettled([send]);
}
