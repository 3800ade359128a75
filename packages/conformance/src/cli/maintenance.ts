import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type CheckSource, discoverStore, type TurnRecovery } from '@turnjournal/reader';
import type { RecordStore } from '@turnjournal/reader/record-store';
import {
  compactEventLog,
  DEFAULT_RETENTION_SECONDS,
  type EventLogCompaction,
  JOURNAL_ONLY_HOOKS,
  JournalLockedError,
  openEventLog,
  type RecoveryHooks,
  recoverStore,
  type StoreRecovery,
  type SweepReport,
  sweepTurnJournals,
  WriterError,
} from '@turnjournal/writer';
import { ConformanceError } from '../errors.js';
import type { CompactOutput, RecoverOutput } from './output-schemas.js';
import { textLine, textLines } from './terminal-text.js';

/** Options of the `recover` command. */
export interface RecoverCommandOptions {
  /** Apply the plan instead of printing it. */
  readonly apply: boolean;
  /** An ES module exporting `ensureUserMessage` and `ensureInterruptionMarker` (named, or on its default export). */
  readonly hooks: string | undefined;
  /** Apply with no host transcript: only the journals are closed. */
  readonly journalOnly: boolean;
}

/** `turnjournal recover`: the recovery plan, or its application through host hooks. */
export async function recoverCommand(source: CheckSource, options: RecoverCommandOptions): Promise<StoreRecovery> {
  if (!options.apply) {
    if (options.hooks !== undefined || options.journalOnly)
      throw new ConformanceError('usage', 'recover: --hooks and --journal-only only make sense with --apply');
    return recoverStore(source);
  }
  if ((options.hooks === undefined) === !options.journalOnly)
    throw new ConformanceError(
      'usage',
      'recover --apply needs exactly one of --hooks <module> (your host transcript) or --journal-only (no host transcript)',
    );
  const hooks = options.hooks === undefined ? JOURNAL_ONLY_HOOKS : await loadHooks(options.hooks);
  return recoverStore(source, { apply: true, hooks });
}

async function loadHooks(file: string): Promise<RecoveryHooks> {
  const path = resolve(file);
  if (!existsSync(path)) throw new ConformanceError('usage', `recover: --hooks ${file}: no such file`);
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  } catch (error) {
    // The module's own error, on one line: a syntax error or a failed import of the host's code.
    const reason = String((error as Error).message ?? error).split('\n')[0];
    throw new ConformanceError('usage', `recover: --hooks ${file} could not be loaded: ${reason}`);
  }
  const candidate = (
    typeof loaded.ensureUserMessage === 'function' ? loaded : (loaded.default ?? {})
  ) as Partial<RecoveryHooks>;
  if (typeof candidate.ensureUserMessage !== 'function' || typeof candidate.ensureInterruptionMarker !== 'function')
    throw new ConformanceError(
      'usage',
      `recover: ${file} must export the functions ensureUserMessage and ensureInterruptionMarker`,
    );
  return candidate as RecoveryHooks;
}

const FINISHED_MEANWHILE = /^the turn is already /;

/**
 * True when recovery left nothing behind: no journal held by a live writer, and every planned turn and event log
 * handled (a turn that finished meanwhile counts as handled). `recover --apply` exits 1 otherwise, so a startup
 * script learns that another process still holds part of the store.
 */
export function recoveryComplete(result: StoreRecovery): boolean {
  return (
    result.heldFiles.length === 0 &&
    result.turns.every((t) => t.outcome === 'recovered' || FINISHED_MEANWHILE.test(t.reason ?? '')) &&
    result.eventLogs.every((log) => log.skipped === undefined)
  );
}

type RecoverPlanEntry = RecoverOutput['plan'][number];

/**
 * The JSON output of `recover` (spec/v1/recover.schema.json) with its plan built on iteration: each planned turn
 * holds its whole submitted record, read back from the journal (up to the line limit each), so a plan of many turns
 * is printed entry by entry (see jsonDocumentChunks) instead of as one object, or one string, that may not fit.
 */
export function streamedRecoveryJson(
  result: StoreRecovery,
  applied: boolean,
): Omit<RecoverOutput, 'plan' | 'turns'> & {
  readonly plan: Iterable<RecoverPlanEntry>;
  readonly turns: Iterable<RecoverOutput['turns'][number]>;
} {
  return {
    command: 'recover',
    applied,
    complete: recoveryComplete(result),
    plan: {
      *[Symbol.iterator]() {
        for (const turn of result.plan) yield planEntryJson(turn);
      },
    },
    // Also built on iteration: an applied plan has one outcome per planned turn.
    turns: {
      *[Symbol.iterator]() {
        for (const turn of result.turns)
          yield {
            session_id: turn.sessionId,
            turn_id: turn.turnId,
            outcome: turn.outcome,
            performed: [...turn.performed],
            ...(turn.reason === undefined ? {} : { reason: turn.reason }),
          };
      },
    },
    held_files: [...result.heldFiles],
    event_logs: result.eventLogs.map((log) => ({
      file: log.file,
      cancelled: log.cancelled.map((run) => ({ request_id: run.requestId, seq: run.seq })),
      ...(log.skipped === undefined ? {} : { skipped: log.skipped }),
    })),
    settled: result.settled.map((file) => ({
      file: file.file,
      trimmed_bytes: file.trimmedBytes,
      removed_lock: file.removedLock,
    })),
  };
}

/** The JSON output of `recover` (spec/v1/recover.schema.json) as one object. */
export function recoveryJson(result: StoreRecovery, applied: boolean): RecoverOutput {
  const streamed = streamedRecoveryJson(result, applied);
  // The lists keep their places among the members.
  return { ...streamed, plan: [...streamed.plan], turns: [...streamed.turns] };
}

function planEntryJson(turn: TurnRecovery): RecoverPlanEntry {
  return {
    session_id: turn.sessionId,
    turn_id: turn.turnId,
    state: turn.state,
    actions: turn.actions.map((action) =>
      action.kind === 'ensure_user_message'
        ? { kind: action.kind, submitted: { ...action.submitted } }
        : action.kind === 'append_interrupted'
          ? { kind: action.kind, record: { ...action.record } }
          : { kind: action.kind },
    ),
  };
}

/** Text output of `recover`, line by line. */
export function* recoveryTextChunks(result: StoreRecovery, applied: boolean): Generator<string> {
  if (result.plan.length === 0 && result.eventLogs.length === 0)
    yield textLine('No abandoned turn: nothing to recover.');
  // What was done to each planned turn: recoverStore reports the planned turns in the plan's order, so the outcomes
  // are walked alongside the plan, where a look-up of them all held a key string per planned turn (issue 11).
  let next = 0;
  for (const turn of result.plan) {
    const candidate = result.turns[next];
    const done = candidate?.sessionId === turn.sessionId && candidate.turnId === turn.turnId ? candidate : undefined;
    if (done !== undefined) next += 1;
    const head = `${turn.sessionId} ${turn.turnId} (${turn.state})`;
    if (!applied) yield textLine(`${head}: ${turn.actions.map((a) => a.kind).join(' → ')}`);
    else if (done?.outcome === 'recovered') yield textLine(`${head}: recovered (${done.performed.join(' → ')})`);
    else yield textLine(`${head}: skipped: ${done?.reason ?? 'not reached'}`);
  }
  for (const log of result.eventLogs) {
    if (!applied) yield textLine(`${log.file}: cancel its unfinished runs (chat.cancelled)`);
    else if (log.skipped !== undefined) yield textLine(`${log.file}: skipped: ${log.skipped}`);
    else yield textLine(`${log.file}: cancelled ${log.cancelled.map((run) => run.requestId).join(', ') || 'nothing'}`);
  }
  for (const file of result.heldFiles) yield textLine(`held by a live writer, left alone: ${file}`);
  for (const { file, trimmedBytes, removedLock } of result.settled) {
    const what = [trimmedBytes > 0 ? `${trimmedBytes} byte(s) of space cut` : '', removedLock ? 'its lock removed' : '']
      .filter(Boolean)
      .join(', ');
    yield textLine(`left plain JSONL at rest: ${file} (${what})`);
  }
  if (!applied && (result.plan.length > 0 || result.eventLogs.length > 0))
    yield textLine('Plan only; run with --apply to perform it.');
  if (applied && !recoveryComplete(result))
    yield textLine('Not everything was recovered (exit 1): run again once the holders are gone.');
}

/** Parses a retention window: seconds, or a number with a unit `s`, `m`, `h`, `d`. */
export function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)([smhd]?)$/.exec(text.trim());
  if (match === null)
    throw new ConformanceError('usage', `--retention must be a duration such as 48h, 30m, 2d or 3600, got "${text}"`);
  const unit = { '': 1, s: 1, m: 60, h: 3600, d: 86400 }[match[2] as '' | 's' | 'm' | 'h' | 'd'];
  return Number(match[1]) * unit;
}

/** What `turnjournal compact` did: the sweeps of turn journal directories and the compactions of event logs. */
export interface CompactResult {
  /** One retention sweep per turn journal directory. */
  readonly sweeps: readonly SweepReport[];
  /**
   * One compaction per event log (absent in a dry run, which only sweeps), or `skipped` with why: a log whose lock a
   * live process holds is left to that process (its own retention job compacts it, TJ-RET-008).
   */
  readonly eventLogs: readonly (
    | ({ readonly file: string; readonly skipped?: undefined } & EventLogCompaction)
    | { readonly file: string; readonly skipped: string }
  )[];
}

/**
 * `turnjournal compact`: the retention sweep of every turn journal directory under the paths (spec §14.1), then the
 * compaction of every event log (spec §14.2). A dry run reports the sweeps only: event-log compaction has no preview.
 */
export async function compactCommand(
  source: CheckSource,
  options: { readonly retentionSeconds?: number; readonly dryRun: boolean },
): Promise<CompactResult> {
  if (!Array.isArray(source)) return compactStore(source as RecordStore, options);
  const paths = source as readonly string[];
  const retentionSeconds = options.retentionSeconds ?? DEFAULT_RETENTION_SECONDS;
  const dirs = new Set<string>();
  const logs: string[] = [];
  for (const file of discoverStore(paths).files) {
    if (file.hint.family === 'turn') dirs.add(dirname(file.path));
    if (file.hint.family === 'event') logs.push(file.path);
  }
  const sweeps: SweepReport[] = [];
  for (const dir of [...dirs].sort())
    sweeps.push(await sweepTurnJournals(dir, { retentionSeconds, dryRun: options.dryRun }));
  const eventLogs: CompactResult['eventLogs'][number][] = [];
  if (!options.dryRun)
    for (const file of logs) {
      try {
        eventLogs.push({ file, ...(await compactEventLog(file, { retentionSeconds })) });
      } catch (error) {
        // A live server holds this log: skip it and say so, rather than fail the whole run (issue 15). So does a log
        // whose foreign writer's lock (gptme's) cannot be taken here: compacting it could drop that writer's appends.
        if (error instanceof WriterError && error.code === 'foreign_lock_unavailable') {
          eventLogs.push({ file, skipped: error.message });
          continue;
        }
        if (!(error instanceof JournalLockedError)) throw error;
        const holder =
          error.holder === undefined ? 'another process' : `pid ${error.holder.pid} on ${error.holder.host}`;
        eventLogs.push({ file, skipped: `held by ${holder}` });
      }
    }
  return { sweeps, eventLogs };
}

/**
 * `turnjournal compact` of a record store (spec §19.1): the sweep of its turn journals, then the compaction of each
 * event log no live owner holds, each opened as its owner through the store.
 */
async function compactStore(
  store: RecordStore,
  options: { readonly retentionSeconds?: number; readonly dryRun: boolean },
): Promise<CompactResult> {
  const retentionSeconds = options.retentionSeconds ?? DEFAULT_RETENTION_SECONDS;
  // The sweep and the logs opened on the store age records by the store's own clock (a PostgreSQL store's is the
  // database server's), not this machine's: a CLI run whose clock is off must not prune what the servers still keep
  // (TJ-STORE-026).
  const sweep = await sweepTurnJournals(store, { retentionSeconds, dryRun: options.dryRun });
  const eventLogs: CompactResult['eventLogs'][number][] = [];
  if (!options.dryRun)
    for await (const entry of store.list({ family: 'event' })) {
      if (entry.location.family !== 'event') continue;
      let log: Awaited<ReturnType<typeof openEventLog>>;
      try {
        log = await openEventLog({ store, sessionId: entry.location.sessionId });
      } catch (error) {
        // A live server owns this log: its own retention job compacts it (TJ-RET-008).
        if ((error as { code?: unknown }).code !== 'journal_locked') throw error;
        eventLogs.push({ file: entry.name, skipped: 'held by its live owner' });
        continue;
      }
      try {
        eventLogs.push({ file: entry.name, ...(await log.compact({ retentionSeconds })) });
      } finally {
        await log.close();
      }
    }
  return { sweeps: sweep.sessions.length === 0 ? [] : [sweep], eventLogs };
}

/** Text output of `compact`. */
export function formatCompaction(result: CompactResult): string {
  const lines: string[] = [];
  if (result.sweeps.length === 0 && result.eventLogs.length === 0) lines.push('No turn journal or event log found.');
  for (const report of result.sweeps) {
    lines.push(`${report.dir}${report.dryRun ? ' (dry run)' : ''}`);
    for (const session of report.sessions) {
      if (session.skipped !== undefined) lines.push(`  ${session.sessionId}: kept everything: ${session.skipped}`);
      else
        lines.push(
          `  ${session.sessionId}: ${report.dryRun ? 'would prune' : 'pruned'} ${session.prunedTurnIds.length} turn(s)` +
            (session.rewrittenFiles.length > 0 ? `, rewrote ${session.rewrittenFiles.length} file(s)` : ''),
        );
    }
  }
  for (const log of result.eventLogs)
    lines.push(
      log.skipped !== undefined
        ? `${log.file}: skipped, ${log.skipped} (a live process compacts its own logs)`
        : log.compacted
          ? `${log.file}: removed ${log.removedRecords} record(s) before the checkpoint at seq ${log.checkpointSeq}`
          : `${log.file}: kept everything (${log.reason ?? 'nothing to remove'})`,
    );
  return textLines(lines);
}

/** The JSON output of `compact` (spec/v1/compact.schema.json). */
export function compactionJson(result: CompactResult, dryRun: boolean): CompactOutput {
  return {
    command: 'compact',
    dry_run: dryRun,
    sweeps: result.sweeps.map((sweep) => ({
      dir: sweep.dir,
      sessions: sweep.sessions.map((session) => ({
        session_id: session.sessionId,
        pruned_turn_ids: [...session.prunedTurnIds],
        rewritten_files: [...session.rewrittenFiles],
        ...(session.skipped === undefined ? {} : { skipped: session.skipped }),
      })),
    })),
    event_logs: result.eventLogs.map((log) =>
      log.skipped !== undefined
        ? { file: log.file, skipped: log.skipped }
        : {
            file: log.file,
            compacted: log.compacted,
            expired_runs: [...log.expiredRuns],
            removed_records: log.removedRecords,
            removed_damaged_lines: log.removedDamagedLines,
            removed_bytes: log.removedBytes,
            checkpoint_seq: log.checkpointSeq,
            first_retained_seq: log.firstRetainedSeq,
            ...(log.reason === undefined ? {} : { reason: log.reason }),
            ...(log.blockedBy === undefined
              ? {}
              : {
                  blocked_by: {
                    // The CLI compacts files: a file store's cursor is the line's byte offset (spec §19.3).
                    offset: log.blockedBy.cursor,
                    seq: log.blockedBy.seq,
                    ...(log.blockedBy.requestId === undefined ? {} : { request_id: log.blockedBy.requestId }),
                  },
                }),
          },
    ),
  };
}
