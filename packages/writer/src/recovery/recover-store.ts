import type {
  CheckSource,
  HostView,
  RecoveryAction,
  RecoveryPlan,
  StoreCheck,
  TurnRecovery,
} from '@turnjournal/reader';
import {
  auditStoreListing,
  diskContents,
  type RecordStoreContents,
  recordStoreContents,
  type StoreContents,
  turnsOf,
} from '@turnjournal/reader/_internals';
import type { RecordStore } from '@turnjournal/reader/record-store';
import { WriterError } from '../errors.js';
import type { EventLog } from '../event/event-log.js';
import { openEventLog } from '../event/open-event-log.js';
import type { FileSystem } from '../fs/file-system.js';
import { openTurnJournal } from '../turn/open-turn-journal.js';
import { type SettledFile, settleFilesAtRest } from './settle-at-rest.js';

/** A turn being recovered, as the host hooks see it. */
export interface RecoveringTurn {
  /** The session. */
  readonly sessionId: string;
  /** The turn. */
  readonly turnId: string;
  /** Its state before recovery (`submitted`, `worker_started` or `assistant_started`). */
  readonly state: string;
}

/**
 * The host's side of startup recovery (spec §12): how the host transcript (seed 000's sidecar) shows what happened.
 * Both hooks MUST be idempotent and keyed by `turn_id` (TJ-RECOV-008): the marker they add carries the turn id, and
 * they add nothing when the transcript already has it, because recovery may run again after a crash at any step.
 */
export interface RecoveryHooks {
  /**
   * Restores the submitted user message into the host transcript, with a recovery marker, unless it is there
   * already. Never called for an orphan turn (no `submitted` record).
   */
  ensureUserMessage(turn: RecoveringTurn, submitted: Readonly<Record<string, unknown>>): void | Promise<void>;
  /** Adds a visible interruption marker for the turn to the host transcript, unless it has one already. */
  ensureInterruptionMarker(turn: RecoveringTurn): void | Promise<void>;
}

/** Hooks for a store without a host transcript: nothing to restore, nothing to mark; only the journal is closed. */
export const JOURNAL_ONLY_HOOKS: RecoveryHooks = {
  ensureUserMessage() {},
  ensureInterruptionMarker() {},
};

/** Options of {@link recoverStore}. */
export interface RecoverStoreOptions {
  /** The host hooks; required to apply a plan. Use {@link JOURNAL_ONLY_HOOKS} for a store without a host transcript. */
  readonly hooks?: RecoveryHooks;
  /** What the host transcript holds, so the plan leaves out steps already done (display only: hooks are idempotent). */
  readonly host?: HostView;
  /** False (default) to compute and return the plan only; true to apply it. */
  readonly apply?: boolean;
  /** The file-system layer used to append to files under paths; the real one by default. Not used with a store. */
  readonly fs?: FileSystem;
  /** Wall clock in epoch milliseconds for `created_at`; a record store's own clock or `Date.now` by default. */
  readonly clock?: () => number;
}

/** What happened to one planned turn. */
export interface RecoveredTurn {
  /** The session. */
  readonly sessionId: string;
  /** The turn. */
  readonly turnId: string;
  /** The steps performed, in order. */
  readonly performed: readonly RecoveryAction['kind'][];
  /** `recovered`: closed as interrupted; `skipped`: it needed nothing by the time it was reached (see `reason`). */
  readonly outcome: 'recovered' | 'skipped';
  /** Why a turn was skipped. */
  readonly reason?: string;
}

/** The result of {@link recoverStore}. */
export interface StoreRecovery {
  /** The plan computed from the audit (TJ-RECOV-001). */
  readonly plan: RecoveryPlan;
  /** What was done per planned turn; empty when the plan was not applied. */
  readonly turns: readonly RecoveredTurn[];
  /** Journal files a live writer holds: their turns are not abandoned and were left alone (TJ-RECOV-002). */
  readonly heldFiles: readonly string[];
  /**
   * Event logs with a run that never finished and whose writer is gone (TJ-RECOV-011): planned, or, when applied, the
   * runs closed with `chat.cancelled` (reason `server_startup_recovery`).
   */
  readonly eventLogs: readonly EventLogRecovery[];
  /**
   * Applied: the files whose writer is gone that were left plain JSONL at rest, their pre-allocated space truncated
   * and their leftover lock removed (TJ-RECOV-014). Planned: empty.
   */
  readonly settled: readonly SettledFile[];
}

/** The unfinished runs of one event log whose writer is gone. */
export interface EventLogRecovery {
  /** The event log. */
  readonly file: string;
  /** Applied: the runs closed, with the seq of their `chat.cancelled`. Planned: empty. */
  readonly cancelled: readonly { readonly requestId: string; readonly seq: number }[];
  /** Why the log was left alone, when it was (a live writer took it meanwhile). */
  readonly skipped?: string;
}

/**
 * Startup recovery of a store (spec §12): the files under `paths`, or a record store's journals (spec §19), where a
 * survivor closes what a crashed host left. It audits the store, computes the recovery plan (the abandoned turns: pending,
 * with no file held by a live writer) and, with `apply`, performs each turn's steps in order through the host hooks
 * (TJ-RECOV-003): restore the user message, add the interruption marker, then append `interrupted` with reason
 * `server_startup_recovery` durably (TJ-RECOV-006, TJ-RECOV-007). It never writes an assistant answer or calls a
 * provider (TJ-RECOV-004, TJ-RECOV-005), and never appends to run files (TJ-RECOV-012). Event logs whose writer is gone
 * get `chat.cancelled` for every run that never finished (TJ-RECOV-011). Last, every file of the store whose writer is
 * gone is left plain JSONL at rest: no pre-allocated space, no leftover lock (TJ-RECOV-014, see settleFilesAtRest); a
 * record store keeps nothing beyond its journals' lines, so recovery through one settles nothing.
 *
 * Safe to run twice and to crash at any point and rerun (TJ-RECOV-009): the hooks are idempotent, the append happens
 * last, and before appending the turn's journal is opened (taking its lock, repairing a torn tail, TJ-RECOV-010) and
 * the turn's state is read again, so a turn that became terminal in between is skipped, not closed twice. A turn
 * whose journal a live writer took meanwhile is skipped too (`journal_locked`). Hook errors propagate: the turns
 * already recovered stay recovered, and a rerun continues with the rest.
 */
export async function recoverStore(source: CheckSource, options: RecoverStoreOptions = {}): Promise<StoreRecovery> {
  const { contents, open } = Array.isArray(source)
    ? diskRecovery(source as readonly string[], options)
    : storeRecovery(source as RecordStore, options);
  // The turns are walked, not kept as objects: the result holds the plan, not the check (issue 11: an audit of two
  // million orphan records held an object per turn at its peak).
  const audit = await auditStoreListing(contents, options.host === undefined ? {} : { host: options.host }, true);
  const logs = await unfinishedEventLogs(audit.check, contents);
  if (options.apply !== true)
    return {
      plan: audit.plan,
      turns: [],
      heldFiles: audit.heldFiles,
      eventLogs: logs.map((file) => ({ file, cancelled: [] })),
      settled: [],
    };
  const hooks = options.hooks;
  if (hooks === undefined)
    throw new WriterError(
      'invalid_option',
      'applying a recovery plan needs host hooks (use JOURNAL_ONLY_HOOKS for a store without a host transcript)',
    );
  // The plan lists some of the derived turns in their order (session, then turn): the files of each planned turn are
  // found by walking the turns alongside it, where a look-up of every turn's files held an entry (and a key string)
  // per turn of the store, terminal ones included (issue 11).
  const derived = derivedTurns(audit.check);
  const turns: RecoveredTurn[] = [];
  // Planned turns of one journal file follow each other (the plan is in session order): they share one open of it.
  // Opening it per turn read the whole file again for every turn, quadratic in a journal with many pending turns.
  const journals = new JournalsInTurn(open);
  try {
    for (const planned of audit.plan) {
      let turn = derived.next();
      while (!turn.done && !(turn.value.sessionId === planned.sessionId && turn.value.turnId === planned.turnId))
        turn = derived.next();
      await journals.add(await recoverTurn(planned, turn.done ? [] : turn.value.files, hooks, journals));
      turns.push(...journals.takeDone());
    }
    await journals.settle();
    turns.push(...journals.takeDone());
  } finally {
    await journals.close();
  }
  const eventLogs: EventLogRecovery[] = [];
  for (const file of logs) eventLogs.push(await cancelUnfinishedRuns(file, open));
  const settled = await open.settle(audit.check.files.map((file) => file.path));
  return { plan: audit.plan, turns, heldFiles: audit.heldFiles, eventLogs, settled };
}

/** Every derived turn of the check, session after session, each in its session's order. */
function* derivedTurns(check: StoreCheck): Generator<StoreCheck['sessions'][number]['turns'][number]> {
  for (const session of check.sessions) yield* turnsOf(session);
}

/**
 * Event logs that have a run without a finishing record (the active run, or an abandoned one) and whose lock no live
 * writer holds: their runs can no longer finish.
 */
async function unfinishedEventLogs(check: StoreCheck, contents: StoreContents): Promise<string[]> {
  const abandoned = new Set(check.findings.filter((f) => f.code === 'abandoned_run').map((f) => f.file));
  const unfinished: string[] = [];
  for (const log of check.eventLogs) {
    if (log.activeRequestId === null && !abandoned.has(log.file)) continue;
    const status = await contents.ownerStatus(log.file);
    if (status === 'none' || status === 'stale' || status === 'expired') unfinished.push(log.file);
  }
  return unfinished;
}

type OpenJournal = Awaited<ReturnType<typeof openTurnJournal>>;

/** How recovery opens, for appending, a journal its audit named: a file under the paths, or a store's journal. */
interface RecoveryOpeners {
  turnJournal(name: string, sessionId: string): Promise<OpenJournal>;
  eventLog(name: string): Promise<EventLog>;
  /** Leaves the journals whose writer is gone as plain lines at rest (TJ-RECOV-014); what it did. */
  settle(names: readonly string[]): Promise<readonly SettledFile[]>;
}

/** Recovery of the files under `paths`, opened with the file-system layer of the options. */
function diskRecovery(
  paths: readonly string[],
  options: RecoverStoreOptions,
): { contents: StoreContents; open: RecoveryOpeners } {
  const layer = {
    ...(options.fs === undefined ? {} : { fs: options.fs }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  };
  return {
    contents: diskContents(paths),
    open: {
      turnJournal: (file, sessionId) => openTurnJournal({ file, sessionId, durability: 'group', ...layer }),
      eventLog: (file) => openEventLog({ file, ...layer }),
      settle: async (files) => (await settleFilesAtRest(files, options.fs)).settled,
    },
  };
}

/** Recovery of a record store's journals (spec §19), each opened by the location the store listed it at. */
function storeRecovery(
  store: RecordStore,
  options: RecoverStoreOptions,
): { contents: StoreContents; open: RecoveryOpeners } {
  const contents: RecordStoreContents = recordStoreContents(store);
  // A shared store's own clock (a database's) stamps what recovery writes unless the caller gave one (TJ-STORE-026).
  const storeClock = options.clock ?? store.clock;
  const clock = storeClock === undefined ? {} : { clock: storeClock };
  const locationOf = (name: string, family: 'turn' | 'event') => {
    const location = contents.locationOf(name);
    if (location?.family !== family)
      throw new WriterError('invalid_option', `${name} is not a ${family} journal the store listed`);
    return location;
  };
  return {
    contents,
    open: {
      turnJournal: async (name, sessionId) => {
        const { shard } = locationOf(name, 'turn') as { shard?: string };
        return openTurnJournal({
          store,
          sessionId,
          durability: 'group',
          ...(shard === undefined ? {} : { shard }),
          ...clock,
        });
      },
      eventLog: async (name) => {
        const { sessionId } = locationOf(name, 'event') as { sessionId: string };
        return openEventLog({ store, sessionId, ...clock });
      },
      // A store keeps its journals' lines and nothing beyond them: no pre-allocated space, no lock file to settle.
      settle: async () => [],
    },
  };
}

async function cancelUnfinishedRuns(file: string, open: RecoveryOpeners): Promise<EventLogRecovery> {
  let log: EventLog;
  try {
    log = await open.eventLog(file);
  } catch (error) {
    if (codeOf(error) === 'journal_locked') return { file, cancelled: [], skipped: (error as Error).message };
    throw error;
  }
  try {
    return { file, cancelled: await log.cancelUnfinishedRuns() };
  } finally {
    await log.close();
  }
}

/** Planned turns whose `interrupted` appends are in flight at most, before recovery waits for them (see settle). */
const BATCH_TURNS = 1024;

/**
 * The turn journal the recovery is working in, kept open while the planned turns of its file follow each other, and
 * closed (its lock released) when the next planned turn is in another file.
 *
 * It is opened in `group` mode, and the `interrupted` appends of its planned turns are not awaited one by one: those
 * made while a sync is in flight share one write and one fdatasync (spec §11.3), so a journal of many abandoned turns
 * costs two syncs per batch of up to {@link BATCH_TURNS} turns, where one sync per turn made it far slower
 * (issue 11; bench/results/history.md, "The durable `submit` path, `read-derive` re-measured, and `audit` memory").
 * Each append is still acknowledged only once durable (TJ-RECOV-007), and each turn's hooks still run before its
 * append (TJ-RECOV-003). A crash part-way leaves a valid state: every `interrupted` line is a record of its own turn,
 * so the file holds some of the batch's lines whole (their turns are closed) and at most a torn last line (a torn tail
 * that readers ignore and the next writer repairs, TJ-DUR-005); the turns without a whole line are still pending, and
 * a rerun recovers them (TJ-RECOV-009).
 */
class JournalsInTurn {
  readonly #open: RecoveryOpeners;
  #current: { file: string; sessionId: string; journal: OpenJournal | Error } | undefined;
  // The recoveries of the current journal whose appends are in flight, and those done, in plan order.
  #inFlight: Promise<RecoveredTurn>[] = [];
  #done: RecoveredTurn[] = [];

  constructor(open: RecoveryOpeners) {
    this.#open = open;
  }

  /**
   * Adds the next planned turn's recovery, done or in flight (see recoverTurn), keeping the plan's order: a done one
   * waits for those in flight. Once {@link BATCH_TURNS} are in flight, waits for them.
   */
  async add(recovery: RecoveredTurn | InFlight): Promise<void> {
    if ('inFlight' in recovery) {
      // Handled at once, so that a failure before the batch is awaited is no unhandled rejection; settle throws it.
      recovery.inFlight.catch(() => undefined);
      this.#inFlight.push(recovery.inFlight);
      if (this.#inFlight.length >= BATCH_TURNS) await this.settle();
      return;
    }
    await this.settle();
    this.#done.push(recovery);
  }

  /** The recoveries done since the last call, in plan order. */
  takeDone(): RecoveredTurn[] {
    const done = this.#done;
    this.#done = [];
    return done;
  }

  /** Waits for every recovery in flight and counts them done. The first failure is thrown, after all have settled. */
  async settle(): Promise<void> {
    if (this.#inFlight.length === 0) return;
    const inFlight = this.#inFlight;
    this.#inFlight = [];
    const settled = await Promise.allSettled(inFlight);
    const failed = settled.find((result) => result.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    for (const result of settled) this.#done.push((result as PromiseFulfilledResult<RecoveredTurn>).value);
  }

  /** The open journal of `file`, or the error (a held lock, an invalid identifier) that kept it from opening. */
  async open(file: string, sessionId: string): Promise<OpenJournal | Error> {
    const current = this.#current;
    if (current !== undefined && current.file === file && current.sessionId === sessionId) return current.journal;
    // The turns of the journal left behind are settled before its lock is released.
    await this.settle();
    await this.close();
    let journal: OpenJournal | Error;
    try {
      journal = await this.#open.turnJournal(file, sessionId);
    } catch (error) {
      const code = codeOf(error);
      if (code !== 'journal_locked' && code !== 'invalid_identifier') throw error;
      journal = error as Error;
    }
    this.#current = { file, sessionId, journal };
    return journal;
  }

  async close(): Promise<void> {
    const current = this.#current;
    this.#current = undefined;
    if (current !== undefined && !(current.journal instanceof Error)) await current.journal.close();
  }
}

/** A turn recovery whose `interrupted` append is in flight: it resolves once the record is durable. */
interface InFlight {
  readonly inFlight: Promise<RecoveredTurn>;
}

/**
 * Recovers one planned turn: a skipped turn at once, or, once its hooks have run, the promise of its recovery, which
 * resolves when its `interrupted` append is durable (the caller keeps it in flight with the others of its journal, see
 * JournalsInTurn). Before a turn of another journal is opened, the caller settles those in flight.
 */
async function recoverTurn(
  planned: TurnRecovery,
  files: readonly string[],
  hooks: RecoveryHooks,
  journals: JournalsInTurn,
): Promise<RecoveredTurn | InFlight> {
  const { sessionId, turnId } = planned;
  const file = files[0];
  const skipped = (reason: string): RecoveredTurn => ({ sessionId, turnId, performed: [], outcome: 'skipped', reason });
  if (file === undefined) return skipped('the turn has no journal file');
  const journal = await journals.open(file, sessionId);
  if (journal instanceof Error) return skipped(journal.message);
  // Read again under the lock: another process may have finished the turn since the audit.
  const state = journal.stateOf(turnId);
  if (state === 'completed' || state === 'interrupted') return skipped(`the turn is already ${state}`);
  const turn: RecoveringTurn = { sessionId, turnId, state: planned.state };
  const performed: RecoveryAction['kind'][] = [];
  for (const action of planned.actions) {
    if (action.kind === 'ensure_user_message') await hooks.ensureUserMessage(turn, action.submitted);
    else if (action.kind === 'ensure_interruption_marker') await hooks.ensureInterruptionMarker(turn);
    else {
      // The last step (TJ-RECOV-003): queued now, acknowledged once durable, awaited with the turns of its batch.
      const appended = journal.interrupt(turnId, action.record.reason);
      const kinds = [...performed, action.kind];
      return {
        inFlight: appended.then(() => ({ sessionId, turnId, performed: kinds, outcome: 'recovered' as const })),
      };
    }
    performed.push(action.kind);
  }
  return { sessionId, turnId, performed, outcome: 'recovered' };
}

/**
 * The stable code of an error: a writer's, or a record store's (a store backend throws its own error class, with the
 * codes of spec §19: `journal_locked` when another owner holds the journal).
 */
function codeOf(error: unknown): string | undefined {
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}
