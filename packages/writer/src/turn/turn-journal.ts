// Over 450 lines: the lifecycle API (about 300 lines with its input types) and the incremental reading of the session's
// other shards live here together for now; the shard reader (refreshSiblings and its listing cache) is the next split.
import { basename, dirname, join } from 'node:path';
import { setImmediate } from 'node:timers';
import { storePathSegments } from '@turnjournal/reader/store-format';
import type { Attachment, Finding, TurnEventName } from '@turnjournal/schema';
import { type AppendAck, AppendFile, type Durability, type OpenReport } from '../append/append-file.js';
import { encodeCheckedRecord } from '../append/encode-checked.js';
import { JournalAppender } from '../append/journal-appender.js';
import { appendFileOptions, resolveWriterOptions } from '../append/writer-options.js';
import { WriterError } from '../errors.js';
import { attempt, ensureDirectory } from '../fs/durable-ops.js';
import type { FileSystem } from '../fs/file-system.js';
import type { AcquireLockOptions } from '../fs/lock.js';
import { requireIdentifier } from '../require-identifier.js';
import { descriptorSource, readTurnRecords } from './read-turn-records.js';
import { newTurnId } from './turn-id.js';
import { contentDigest, isTerminal, type KnownTurn, submittedDigest, TURN_RANK, TurnTable } from './turn-table.js';

/** Where a turn journal is: a directory plus the name derived from the session and shard (the usual way). */
export interface TurnJournalInDirectory {
  /** The turn journal directory (spec §4.4 recommends `<root>/_turn_journal`); created, durably, when missing. */
  readonly dir: string;
  /**
   * The shard, for servers where several processes write one session: the file becomes `<sessionId>~<shard>.jsonl`
   * and each process holds its own lock. A valid identifier (TJ-FAM-014); the process id is the recommended choice
   * (TJ-FAM-015). Without it the file is `<sessionId>.jsonl`.
   */
  readonly shard?: string;
  /** Not used with `dir`. */
  readonly file?: undefined;
}

/**
 * Where a turn journal is: an existing journal's explicit path (recovery uses this for journals found by a scan).
 * Its directory's other files `<sessionId>.jsonl` and `<sessionId>~*.jsonl` are read as the session's other shards.
 */
export interface TurnJournalAtPath {
  /** The journal file. */
  readonly file: string;
  /** Not used with `file`. */
  readonly dir?: undefined;
  /** Not used with `file`. */
  readonly shard?: undefined;
}

/** Options of {@link openTurnJournal}: where the journal is, and how to write it. */
export type OpenTurnJournalOptions = (TurnJournalInDirectory | TurnJournalAtPath) & TurnJournalWriteOptions;

/** How a turn journal is written. */
export interface TurnJournalWriteOptions {
  /** The session; a valid identifier (spec §4.3), checked before any path is built (TJ-FAM-010). */
  readonly sessionId: string;
  /** Durability mode; `every` by default (TJ-DUR-012). `none` is refused for turn journals (TJ-DUR-016). */
  readonly durability?: Exclude<Durability, 'none'>;
  /** The file-system layer; the real one by default. */
  readonly fs?: FileSystem;
  /** Wall clock in epoch milliseconds, for `created_at` and generated turn ids; `Date.now` by default. */
  readonly clock?: () => number;
  /** Line-size limit in bytes; 16 MiB by default. */
  readonly maxLineBytes?: number;
  /** Options of the lock acquisition. */
  readonly lock?: AcquireLockOptions;
}

/** A user turn to submit. */
export interface SubmitInput {
  /** The exact text the user submitted. */
  readonly content: string;
  /**
   * The turn id. Give the id the client generated when the user pressed send and resends with every retry: a retried
   * submission with the same id and content is then recognised and not written twice. Without it a new id of the
   * recommended form is generated; a caller that retries must then reuse the id it got back.
   */
  readonly turnId?: string;
  /** Attachment metadata (never the bytes, TJ-TURN-011). */
  readonly attachments?: readonly Attachment[];
  /** The stream the turn's output is delivered on. */
  readonly streamId?: string | null;
  /** Working directory or workspace of the turn. */
  readonly workspace?: string | null;
  /** Model requested for the turn. */
  readonly model?: string | null;
  /** Provider of that model. */
  readonly modelProvider?: string | null;
  /** Author role; `user` by default. */
  readonly role?: string;
  /** Further members to store in the record (kept by every reader); they may not redefine a member above. */
  readonly extra?: Readonly<Record<string, unknown>>;
}

/** The outcome of {@link TurnJournal.submit}. */
export interface SubmitResult {
  /** The turn id. */
  readonly turnId: string;
  /** False when the turn was already submitted with the same content (a retry): nothing was written. */
  readonly created: boolean;
  /** The turn's state after the call. */
  readonly state: TurnEventName;
}

const SUBMIT_MEMBERS = new Set([
  'version',
  'event',
  'turn_id',
  'session_id',
  'stream_id',
  'created_at',
  'role',
  'content',
  'attachments',
  'workspace',
  'model',
  'model_provider',
]);

/** The file name of a session's turn journal: `<sessionId>.jsonl` or `<sessionId>~<shard>.jsonl` (spec §4.4). */
export function turnJournalFileName(sessionId: string, shard?: string): string {
  requireIdentifier(sessionId, 'session id');
  if (shard !== undefined) requireIdentifier(shard, 'shard');
  return storePathSegments({ family: 'turn', sessionId, ...(shard === undefined ? {} : { shard }) }).at(-1) as string;
}

/**
 * Opens the turn journal of one session for writing (spec §5, §11): validates the ids, creates the directory and
 * the file durably or repairs a torn tail, takes the file's lock, and reads the session's turns (its own file and the
 * other shards of the session) so that transitions can be checked and retried submissions recognised.
 */
export async function openTurnJournal(options: OpenTurnJournalOptions): Promise<TurnJournal> {
  const resolved = resolveWriterOptions(options, ['every', 'group'], ' for turn journals (TJ-DUR-016)');
  const fs = resolved.fs;
  let path: string;
  if (options.file !== undefined) {
    requireIdentifier(options.sessionId, 'session id');
    path = options.file;
  } else {
    path = join(options.dir, turnJournalFileName(options.sessionId, options.shard));
    await ensureDirectory(fs, options.dir);
  }
  const file = await AppendFile.open(path, appendFileOptions(resolved));
  try {
    const table = new TurnTable();
    const own = await readTurnRecords(path, file.source, table);
    const journal = new TurnJournal(file, options, resolved.clock, resolved.maxLineBytes, fs, table, own.findings);
    await journal.refreshSiblings();
    return journal;
  } catch (error) {
    await file.close().catch(() => undefined);
    throw error;
  }
}

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
  readonly #file: AppendFile;
  /** Checks, reserves and appends in call order; re-reads the table after a failed write (TJ-DUR-030). */
  readonly #appender: JournalAppender;
  readonly #fs: FileSystem;
  readonly #dir: string;
  readonly #clock: () => number;
  readonly #maxLineBytes: number;
  #table: TurnTable;
  /** Where incremental reads of the session's other shards resume, per file name. */
  #siblings = new Map<string, { end: number; ino: number }>();
  /** The last listing of the session's other shards, and the directory's identity and change time when it was taken. */
  #listing: { names: readonly string[]; ino: number; ctimeMs: number | undefined; settled: boolean } | undefined;
  /** Submissions being written, so that an overlapping retry waits for the first instead of writing again. */
  readonly #submitting = new Map<string, Promise<unknown>>();

  /** @internal use {@link openTurnJournal}. */
  constructor(
    file: AppendFile,
    options: OpenTurnJournalOptions,
    clock: () => number,
    maxLineBytes: number,
    fs: FileSystem,
    table: TurnTable,
    findings: readonly Finding[],
  ) {
    this.#file = file;
    this.#appender = new JournalAppender(file, () => this.#reread());
    this.#fs = fs;
    this.#dir = dirname(file.path);
    this.#clock = clock;
    this.#maxLineBytes = maxLineBytes;
    this.#table = table;
    this.sessionId = options.sessionId;
    this.shard = options.shard;
    this.findings = findings;
  }

  /** The journal file. */
  get path(): string {
    return this.#file.path;
  }

  /** The durability mode in force (TJ-DUR-013). */
  get durability(): Durability {
    return this.#file.durability;
  }

  /** What opening found and repaired: creation, lock take-over, torn tail. */
  get opened(): OpenReport {
    return this.#file.opened;
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
        outcome = { kind: 'retried', result: this.#retried(turnId, known, input.content) };
        return null;
      }
      const bytes = this.#encode('submitted', this.#submittedRecord(turnId, input));
      const turn: KnownTurn = {
        state: 'submitted',
        contentDigest: null,
        pendingContent: input.content,
        streamId: input.streamId,
      };
      this.#table.insert(turnId, turn);
      outcome = { kind: 'written', turn };
      // The digest only serves to recognise a later retry: it is computed while the record's sync is in flight
      // rather than before the write (a cold SHA-256 costs about 10 µs there), and from then on the text is not kept.
      setImmediate(() => submittedDigest(turn));
      return bytes;
    };
    // Earlier submissions of this id still in flight: a retry that overlaps the first attempt waits for it, so that
    // it never answers "already submitted" before the first record is durable, nor writes a second one if that fails.
    const earlier = this.#submitting.get(turnId);
    const write = this.#appender.append(() => {
      const unknown = callerId && this.#table.get(turnId) === undefined;
      if (!unknown && earlier === undefined) return reserve();
      return (async () => {
        // A caller's id may be known to another shard.
        if (unknown) await this.refreshSiblings();
        await earlier;
        return reserve();
      })();
    });
    const settled: Promise<unknown> = Promise.allSettled([earlier, write]);
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

  #retried(turnId: string, known: KnownTurn, content: string): SubmitResult {
    const digest = submittedDigest(known);
    if (digest === null || known.state === null)
      throw new WriterError(
        'illegal_transition',
        `turn ${turnId} already has events but no submitted record (an orphan); it cannot be submitted now`,
        this.path,
      );
    if (digest !== contentDigest(content))
      throw new WriterError(
        'turn_id_conflict',
        `turn ${turnId} was already submitted with different content; a turn id names one turn (TJ-TURN-003)`,
        this.path,
      );
    return { turnId, created: false, state: known.state };
  }

  #submittedRecord(turnId: string, input: SubmitInput): Record<string, unknown> {
    const extra = input.extra ?? {};
    for (const key of Object.keys(extra))
      if (SUBMIT_MEMBERS.has(key))
        throw new WriterError('invalid_record', `extra member "${key}" would redefine a submitted field`, this.path);
    const record: Record<string, unknown> = {
      version: 1,
      event: 'submitted',
      turn_id: turnId,
      session_id: this.sessionId,
      ...(input.streamId === undefined ? {} : { stream_id: input.streamId }),
      created_at: this.#clock() / 1000,
      role: input.role ?? 'user',
      content: input.content,
      ...(input.attachments === undefined ? {} : { attachments: input.attachments }),
      ...(input.workspace === undefined ? {} : { workspace: input.workspace }),
      ...(input.model === undefined ? {} : { model: input.model }),
      ...(input.modelProvider === undefined ? {} : { model_provider: input.modelProvider }),
      ...extra,
    };
    return record;
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
      this.#checkTransition(turnId, known, event);
      const bytes = this.#encode(event, {
        version: 1,
        event,
        turn_id: turnId,
        session_id: this.sessionId,
        ...(known.streamId === undefined ? {} : { stream_id: known.streamId }),
        created_at: this.#clock() / 1000,
        ...members,
      });
      // Reserve the new state before the write, so that an overlapping call is checked against it.
      known.state = event;
      return bytes;
    };
    const ack = await this.#appender.append(() => {
      if (this.#table.get(turnId) !== undefined) return reserve();
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
    await readTurnRecords(this.path, this.#file.source, table);
    this.#table = table;
    this.#siblings = new Map();
    this.#listing = undefined;
    await this.refreshSiblings();
  }

  #checkTransition(turnId: string, turn: KnownTurn, event: TurnEventName): void {
    const state = turn.state;
    if (state === null) return;
    if (isTerminal(state))
      throw new WriterError(
        'illegal_transition',
        `turn ${turnId} is already ${state}; nothing may follow a terminal event`,
        this.path,
      );
    if (!isTerminal(event) && TURN_RANK[event] <= TURN_RANK[state])
      throw new WriterError(
        'illegal_transition',
        `turn ${turnId} is ${state}; "${event}" would be a step backwards or a repeat`,
        this.path,
      );
  }

  /**
   * Reads what the session's other shards appended since the last read (every file `<sessionId>~*.jsonl` and
   * `<sessionId>.jsonl` other than this one). Called automatically when a turn id is not known yet, so a worker in
   * another process can advance a turn this process submitted, and a retry that reached another process first is
   * recognised. Costs a `stat` of the directory and of each known shard when nothing changed.
   */
  async refreshSiblings(): Promise<void> {
    for (const name of await this.#siblingNames()) await this.#readSibling(join(this.#dir, name), name);
  }

  /**
   * The names of the session's other shards. The directory is listed again only when its change time moved since a
   * listing that can be trusted: the recommended layout keeps every session of a store in one directory, so a listing
   * per submission would cost time in proportion to the whole store.
   */
  async #siblingNames(): Promise<readonly string[]> {
    const listedAt = Date.now();
    const dir = await attempt(this.#dir, 'stat', () => this.#fs.stat(this.#dir));
    const cached = this.#listing;
    if (cached?.settled === true && cached.ino === dir.ino && cached.ctimeMs === dir.ctimeMs) return cached.names;
    const own = basename(this.path);
    const names = (await attempt(this.#dir, 'readdir', () => this.#fs.readdir(this.#dir))).filter(
      (name) => name !== own && isSessionFile(name, this.sessionId),
    );
    this.#listing = { names, ino: dir.ino, ctimeMs: dir.ctimeMs, settled: isSettled(dir.ctimeMs, listedAt) };
    return names;
  }

  async #readSibling(path: string, name: string): Promise<void> {
    const known = this.#siblings.get(name);
    if (known !== undefined) {
      // Unchanged since the last read (same file, same size): nothing to open.
      const now = await this.#fs.stat(path).catch(() => undefined);
      if (now !== undefined && now.ino === known.ino && now.size === known.end) return;
    }
    let fd: number;
    try {
      fd = await this.#fs.open(path, 'read');
    } catch {
      return; // removed since the listing (a sweep deleted an empty shard)
    }
    try {
      const { size, ino } = await this.#fs.fstat(fd);
      // A file that shrank or was replaced was rewritten by a sweep: read it again from the start.
      const from = known !== undefined && known.ino === ino && known.end <= size ? known.end : 0;
      if (from === size) return;
      const read = await readTurnRecords(path, descriptorSource(this.#fs, path, fd), this.#table, from);
      this.#siblings.set(name, { end: read.end, ino });
    } finally {
      await this.#fs.close(fd).catch(() => undefined);
    }
  }

  /** Waits for pending appends, then closes the file and releases its lock; overlapping calls close it once. */
  close(): Promise<void> {
    return this.#appender.close();
  }
}

function indexMember(index: number | null | undefined): Record<string, unknown> {
  return index === undefined ? {} : { assistant_message_index: index };
}

/**
 * Margin between a directory's change time and the moment it was listed for the listing to be trusted while the change
 * time stays the same. File systems stamp changes with a coarse clock (a scheduler tick on Linux, whole seconds on
 * some): an entry added in the same tick as the listing, just after it, would leave the change time as it was. A
 * change time well before the listing cannot be shared by a later change. Stamps in whole seconds get two seconds.
 */
const FINE_CLOCK_MARGIN_MS = 100;
const COARSE_CLOCK_MARGIN_MS = 2000;

function isSettled(ctimeMs: number | undefined, listedAt: number): boolean {
  if (ctimeMs === undefined) return false;
  const margin = ctimeMs % 1000 === 0 ? COARSE_CLOCK_MARGIN_MS : FINE_CLOCK_MARGIN_MS;
  return ctimeMs < listedAt - margin;
}

function isSessionFile(name: string, sessionId: string): boolean {
  return name === `${sessionId}.jsonl` || (name.startsWith(`${sessionId}~`) && name.endsWith('.jsonl'));
}
