import { setImmediate } from 'node:timers';
import type { WritableJournal } from '@turnjournal/reader/record-store';
import type { Finding, TurnEventName } from '@turnjournal/schema';
import type { AppendAck, Durability, OpenReport } from '../append/append-file.js';
import { encodeCheckedRecord } from '../append/encode-checked.js';
import { JournalAppender } from '../append/journal-appender.js';
import { WriterError } from '../errors.js';
import { requireIdentifier } from '../require-identifier.js';
import { encodeSubmittedLine } from './encode-submitted.js';
import { readTurnRecords } from './read-turn-records.js';
import type { Siblings } from './store-siblings.js';
import { newTurnId } from './turn-id.js';
import type { OpenTurnJournalOptions, SubmitInput, SubmitResult } from './turn-journal-inputs.js';
import { checkTransition, indexMember, retriedSubmission, stepRecord, submittedRecord } from './turn-rules.js';
import { isTerminal, type KnownTurn, submittedDigest, TurnTable } from './turn-table.js';

/**
 * The writer of one session's turn journal: the lifecycle API of seed 000. Every method appends one record and
 * resolves once it is durable (`every` or `group` mode). Transitions are checked before anything is written: a step
 * backwards, a repeated step or any step after a terminal event is rejected with `illegal_transition` and writes
 * nothing. Calls may overlap; records are written in call order.
 */
export class TurnJournal {
  /** The session. */
  readonly sessionId: string;
  /** The shard, when the file is a shard. */
  readonly shard: string | undefined;
  /** Findings about lines already in the file when it was opened (mid-file damage is left in place and reported). */
  readonly findings: readonly Finding[];
  readonly #file: WritableJournal;
  /** Checks, reserves and appends in call order; re-reads the table after a failed write (TJ-DUR-030). */
  readonly #appender: JournalAppender;
  readonly #clock: () => number;
  readonly #maxLineBytes: number;
  #table: TurnTable;
  /** The session's other shards, read incrementally into the table. */
  readonly #siblings: Siblings;
  /**
   * Submissions being written, so that an overlapping retry waits for the first instead of writing again: per turn id,
   * the last one's wait, which gives a promise that settles once it and every earlier submission of the id have. Made
   * only when a retry asks for it: made at every submit, its reactions to the write ran before the submit could resume.
   */
  readonly #submitting = new Map<string, () => Promise<unknown>>();

  /** @internal use {@link openTurnJournal}. */
  constructor(
    file: WritableJournal,
    options: OpenTurnJournalOptions,
    clock: () => number,
    maxLineBytes: number,
    siblings: (table: () => TurnTable) => Siblings,
    table: TurnTable,
    findings: readonly Finding[],
  ) {
    this.#file = file;
    this.#appender = new JournalAppender(file, () => this.#reread());
    this.#clock = clock;
    this.#maxLineBytes = maxLineBytes;
    this.#table = table;
    this.#siblings = siblings(() => this.#table);
    this.sessionId = options.sessionId;
    this.shard = options.shard;
    this.findings = findings;
  }

  /** The journal file. */
  get path(): string {
    return this.#file.name;
  }

  /** The durability mode in force (TJ-DUR-013). */
  get durability(): Durability {
    return this.#file.durability;
  }

  /** What opening found and repaired: creation, lock take-over, torn tail. */
  get opened(): OpenReport {
    return this.#file.opened;
  }

  /**
   * True once the journal refuses every append until it is reopened: a sync failed (TJ-DUR-021), a failed write could
   * not be undone (TJ-DUR-023), or its file was removed while open (`journal_unlinked`, TJ-DUR-036). A refused record,
   * or a failed write that was cut back (a full disk), leaves it false: only that call failed. An owner that hands the
   * journal out (a live session) reopens it when this is true.
   */
  get poisoned(): boolean {
    return this.#file.poisoned;
  }

  /** The state of a turn as this writer knows it (its own file and the other shards as last read), if known. */
  stateOf(turnId: string): TurnEventName | undefined {
    return this.#table.get(turnId)?.state ?? undefined;
  }

  /** Every turn this writer knows that is not terminal, with its state. */
  pendingTurns(): { turnId: string; state: TurnEventName }[] {
    const pending: { turnId: string; state: TurnEventName }[] = [];
    for (const [turnId, turn] of this.#table.entries())
      if (turn.state !== null && !isTerminal(turn.state)) pending.push({ turnId, state: turn.state });
    return pending;
  }

  /**
   * Submits a user turn: appends `submitted` and resolves only once it is durable (TJ-DUR-001), so a worker may start
   * when this resolves and not before. Idempotent on `turnId`: a retry with the same id and content writes nothing
   * and answers `created: false`; the same id with different content is rejected with `turn_id_conflict`
   * (TJ-TURN-003).
   */
  async submit(input: SubmitInput): Promise<SubmitResult> {
    if (typeof input !== 'object' || input === null || typeof input.content !== 'string')
      throw new WriterError('invalid_record', 'submit needs an object with a string `content`', this.path);
    const callerId = input.turnId !== undefined;
    const turnId = input.turnId ?? newTurnId(this.#clock());
    requireIdentifier(turnId, 'turn id');
    let outcome: { kind: 'retried'; result: SubmitResult } | { kind: 'written'; turn: KnownTurn } | undefined;
    const reserve = (): Uint8Array | null => {
      if (this.#table.isRemoved(turnId))
        throw new WriterError(
          'turn_id_conflict',
          `turn ${turnId} was removed by a retention sweep; its id cannot name a new turn, because readers drop every record of it`,
          this.path,
        );
      const known = this.#table.get(turnId);
      if (known !== undefined) {
        outcome = { kind: 'retried', result: retriedSubmission(turnId, known, input.content, this.path) };
        return null;
      }
      // One clock reading for both paths: the generic one takes over from the fast one with the same `created_at`.
      const now = this.#clock();
      const bytes =
        encodeSubmittedLine(this.sessionId, turnId, input, now, this.#maxLineBytes) ??
        this.#encode(
          'submitted',
          submittedRecord(this.sessionId, turnId, input, () => now, this.path),
        );
      const turn: KnownTurn = {
        state: 'submitted',
        contentDigest: null,
        pendingContent: input.content,
        streamId: input.streamId,
      };
      this.#table.insert(turnId, turn);
      outcome = { kind: 'written', turn };
      // The digest only serves to recognise a later retry: it is computed while the record's sync is in flight
      // rather than before the write, which a cold SHA-256 would delay (bench/results/history.md, "The target not
      // met: durable `submit` latency", step 3), and from then on the text is not kept.
      setImmediate(() => submittedDigest(turn));
      return bytes;
    };
    const prepare = () => {
      // A caller's id may be known to another shard. When the shards are known not to have changed since they were
      // last read, the id is new and the write is issued in this synchronous run, as a generated id's is.
      const unknown = callerId && this.#table.get(turnId) === undefined && !this.#siblings.unchanged();
      if (!unknown) return reserve();
      return this.refreshSiblings().then(reserve);
    };
    // Earlier submissions of this id still in flight: a retry that overlaps the first attempt waits for it, so that
    // it never answers "already submitted" before the first record is durable, nor writes a second one if that fails.
    // It waits before it enters the appender, not in its preparation: a failed write's rejection comes only after the
    // appender has re-read the file (TJ-DUR-030), which a preparation holding the appender would wait for forever.
    const earlier = this.#submitting.get(turnId);
    const write =
      earlier === undefined ? this.#appender.append(prepare) : earlier().then(() => this.#appender.append(prepare));
    const settled = (): Promise<unknown> => Promise.allSettled([earlier?.(), write]);
    this.#submitting.set(turnId, settled);
    try {
      await write;
    } finally {
      if (this.#submitting.get(turnId) === settled) this.#submitting.delete(turnId);
    }
    const done = outcome as { kind: 'retried'; result: SubmitResult } | { kind: 'written'; turn: KnownTurn };
    if (done.kind === 'retried') return done.result;
    return { turnId, created: true, state: done.turn.state ?? 'submitted' };
  }

  /** Records that a worker began processing the turn (`worker_started`). */
  workerStarted(turnId: string): Promise<AppendAck> {
    return this.#advance(turnId, 'worker_started', {});
  }

  /** Records that assistant output began (`assistant_started`), with the index of the assistant message if known. */
  assistantStarted(turnId: string, options: { assistantMessageIndex?: number } = {}): Promise<AppendAck> {
    return this.#advance(turnId, 'assistant_started', indexMember(options.assistantMessageIndex));
  }

  /**
   * Records that the host saved the assistant answer (`completed`, terminal). Call it after the host's own save
   * succeeded: the turn then needs no recovery.
   */
  complete(turnId: string, options: { assistantMessageIndex?: number | null } = {}): Promise<AppendAck> {
    return this.#advance(turnId, 'completed', { ...indexMember(options.assistantMessageIndex), terminal: true });
  }

  /**
   * Records that the turn ended without a completed answer (`interrupted`, terminal), with a reason such as
   * `cancelled`, `rate_limit`, `worker_error` or `server_startup_recovery`.
   */
  interrupt(turnId: string, reason: string): Promise<AppendAck> {
    if (typeof reason !== 'string' || reason.length === 0)
      return Promise.reject(new WriterError('invalid_record', 'interrupt needs a non-empty reason', this.path));
    return this.#advance(turnId, 'interrupted', { reason, terminal: true });
  }

  async #advance(turnId: string, event: TurnEventName, members: Record<string, unknown>): Promise<AppendAck> {
    if (typeof turnId !== 'string' || turnId.length === 0)
      throw new WriterError('invalid_record', 'a turn id must be a non-empty string', this.path);
    const reserve = (): Uint8Array => {
      const known = this.#table.get(turnId);
      if (known === undefined)
        throw new WriterError(
          'unknown_turn',
          `turn ${turnId} was never submitted in session ${this.sessionId}`,
          this.path,
        );
      checkTransition(turnId, known, event, this.path);
      const bytes = this.#encode(event, stepRecord(this.sessionId, turnId, known, event, members, this.#clock));
      // Reserve the new state before the write, so that an overlapping call is checked against it.
      known.state = event;
      return bytes;
    };
    const ack = await this.#appender.append(() => {
      if (this.#table.get(turnId) !== undefined || this.#siblings.unchanged()) return reserve();
      return this.refreshSiblings().then(reserve);
    });
    return ack as AppendAck;
  }

  /** Encodes a turn record, refusing one that is not a valid v1 record of its type (TJ-TURN-015). */
  #encode(event: string, record: Record<string, unknown>): Uint8Array {
    return encodeCheckedRecord(record, { family: 'turn', type: event }, this.#maxLineBytes, this.path).bytes;
  }

  /**
   * After a failed write (TJ-DUR-030): forgets what was reserved and reads the session again, its own file up to what
   * was acknowledged and the other shards from their start.
   */
  async #reread(): Promise<void> {
    const table = new TurnTable();
    await readTurnRecords(this.path, this.#file.reader(), table);
    this.#table = table;
    // Queued behind a `refreshSiblings()` still reading (it folds into the table just replaced): its end positions
    // are forgotten before the shards are read again, never recorded after.
    await this.#siblings.readFromStart();
  }

  /**
   * Reads what the session's other shards appended since the last read (every file `<sessionId>~*.jsonl` and
   * `<sessionId>.jsonl` other than this one). Called automatically when a turn id is not known yet, so a worker in
   * another process can advance a turn this process submitted, and a retry that reached another process first is
   * recognised. Costs a `stat` of the directory and of each known shard when nothing changed. One read runs at a
   * time: a call made while one runs is served by the next, which starts after it has ended.
   */
  refreshSiblings(): Promise<void> {
    return this.#siblings.read();
  }

  /** Waits for pending appends, then closes the file and releases its lock; overlapping calls close it once. */
  close(): Promise<void> {
    return this.#appender.close();
  }
}
