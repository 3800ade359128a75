import { setImmediate } from 'node:timers';
import { type Finding, makeFinding, type RecordFamily } from '@turnjournal/schema';
import { EventLogFold } from '../event/fold-event-log.js';
import { diskContents } from '../file/disk-contents.js';
import type { JournalItem, JournalRecord, ReadJournalOptions, RecoveryMode } from '../framing/read-journal.js';
import type { RecordStore } from '../record-store/record-store.js';
import { recordStoreContents } from '../record-store/record-store-contents.js';
import { type DerivedRun, RunFold } from '../run/fold-run.js';
import { checkStaleState } from '../state/check-stale-state.js';
import type { ReadStateResult } from '../state/read-state.js';
import { explainInvalidIdentifier, isValidIdentifier } from '../store-format/identifiers.js';
import type { DerivedSession, TurnFold } from '../turn/derive-turns.js';
import { FoldArena } from '../turn/fold-arena.js';
import { FindingSink } from './finding-sink.js';
import { SessionFolds } from './session-folds.js';
import type { StoreContents } from './store-contents.js';
import type { StoreFile } from './store-listing.js';

/** Options of {@link checkStore}. */
export interface CheckStoreOptions {
  /** Recovery mode for every file; `tolerant` by default. */
  readonly mode?: RecoveryMode;
  /** Line-size limit in bytes. */
  readonly maxLineBytes?: number;
  /** Findings kept per code and file (default 1,000). */
  readonly maxFindingsPerCode?: number;
  /** Findings kept per code over the whole store (default 10,000, spec TJ-AUDIT-016). */
  readonly maxFindingsPerCodeInStore?: number;
  /**
   * False when the caller reads the findings and counts, not the turns (a `check` that prints its verdict): each
   * session's `turns` is then empty and its `turnCount` says how many there are, and the check keeps no summary of
   * any turn record, so its memory per turn is a fraction (see TurnFoldOptions.keepTurns). True by default.
   */
  readonly keepTurns?: boolean;
}

/** What was read from one file. */
export interface CheckedFile {
  /** The file. */
  readonly path: string;
  /** Its family, from its first record of a known family (TJ-FAM-005), or its layout hint, or `unknown`. */
  readonly family: RecordFamily | 'unknown';
  /** Records read, accepted or not. */
  readonly records: number;
}

/** Findings the framing layer gives a record about itself, judged by v1 rules. */
const RECORD_FINDING_CODES = new Set(['invalid_record', 'unknown_record', 'unsupported_version']);

/** What checking found in one event log. */
export interface EventLogSummary {
  /** The file. */
  readonly file: string;
  /** The session, from the containing directory's name when it is a valid identifier. */
  readonly sessionId: string | undefined;
  /** The highest accepted seq, or null. */
  readonly lastSeq: number | null;
  /** Messages in the derived list. */
  readonly messages: number;
  /** The `request_id` of the active run, or null. */
  readonly activeRequestId: string | null;
  /** `request_id`s of finished runs no client acknowledged (spec §15.5). */
  readonly undelivered: readonly string[];
}

/** The result of checking a store: files, derived turn sessions and every finding. */
export interface StoreCheck {
  /** Every file read. */
  readonly files: readonly CheckedFile[];
  /** Turn sessions, derived over all their shards, sorted by session id, with the files each was read from. */
  readonly sessions: readonly (DerivedSession & { readonly files: readonly string[] })[];
  /** Every run file's derivation (spec §16), with the file it came from. */
  readonly runs: readonly (DerivedRun & { readonly file: string })[];
  /** Every event log's summary (spec §15): the derived messages and runs are not kept, only their counts. */
  readonly eventLogs: readonly EventLogSummary[];
  /** Every finding, capped per code and file and per code over the store. */
  readonly findings: readonly Finding[];
  /** Findings left out by the cap, per code. */
  readonly omitted: Readonly<Record<string, number>>;
}

/**
 * What a check reads: files under paths (a store root, a session directory, a `_turn_journal` directory or single
 * files, as the file binding lays them out), or a record store (spec §19), whose journals are read through its
 * lock-free readers and named by the store.
 */
export type CheckSource = readonly string[] | RecordStore;

/**
 * Reads every journal of a store (or of the files given) and derives its turn sessions. Streams each journal once, so
 * memory follows the derived state, not the store size. Never throws for content: in `strict` mode the first
 * damage or invalid record stops that journal with a finding instead.
 */
export async function checkStore(source: CheckSource, options: CheckStoreOptions = {}): Promise<StoreCheck> {
  return checkStoreListing(contentsOf(source), options, false);
}

/** The contents a check of `source` reads. Internal to the reader. */
export function contentsOf(source: CheckSource): StoreContents {
  return isPaths(source) ? diskContents(source) : recordStoreContents(source);
}

function isPaths(source: CheckSource): source is readonly string[] {
  return Array.isArray(source);
}

/**
 * {@link checkStore}, whose sessions' turns are, when `listTurns` is true, not made into objects: each session's
 * `turns` is empty (but for sessions of a few turns) and `turnsOf` (session-folds.ts) gives them on iteration, for an
 * internal caller that walks them (an audit of two million orphan records held an object per turn at its peak, issue
 * 11).
 * Internal to the reader.
 */
export async function checkStoreListing(
  contents: StoreContents,
  options: CheckStoreOptions,
  listTurns: boolean,
): Promise<StoreCheck> {
  const sink = new FindingSink(options.maxFindingsPerCode, options.maxFindingsPerCodeInStore);
  const discovery = await contents.discover();
  for (const finding of discovery.findings) sink.add(finding);
  // One arena for every session's fold: a store of many small sessions holds one representative table, not one each.
  const arena = new FoldArena(options.keepTurns ?? true);
  arena.listsTurns = listTurns;
  const folds = new SessionFolds(
    discovery.files.filter((file) => file.format === 'jsonl'),
    turnSessionOf,
    arena,
    {
      maxFindingsPerCode: options.maxFindingsPerCode,
      keepTurns: options.keepTurns,
      readRecord: (location) => contents.recordBytes(location),
    },
    (files) => contents.released(files),
  );
  const foldOf = (sessionId: string) => folds.foldOf(sessionId);
  const files: CheckedFile[] = [];
  const runs: (DerivedRun & { file: string })[] = [];
  const eventLogs: EventLogSummary[] = [];
  const states: ReadStateResult[] = [];
  // Small journals are read with synchronous system calls (see readJournal): the check lets the event loop turn
  // between files every few milliseconds, as asynchronous reads did.
  const readOptions: ReadJournalOptions = { mode: options.mode ?? 'tolerant', maxLineBytes: options.maxLineBytes };
  const yieldNow = makeYielder();
  for (const file of discovery.files) {
    await yieldNow();
    if (file.format === 'json') {
      const state = await readState(contents, file, options, sink);
      if (state !== undefined) states.push(state);
      files.push({ path: file.path, family: 'state', records: state?.status === 'valid' ? 1 : 0 });
      continue;
    }
    // Created on the file's first record of their family: most files of a store are turn journals.
    const perFile: PerFileFolds = {};
    const checked = await checkJournalFile(file, contents.journal(file, readOptions), sink, foldOf, perFile);
    folds.read(file, checked.family);
    files.push(checked);
    if (checked.family === 'event') {
      const log = (perFile.event ?? new EventLogFold()).finish();
      for (const finding of log.findings) sink.add(finding);
      eventLogs.push({
        file: file.path,
        sessionId: file.hint.family === 'event' ? file.hint.sessionId : undefined,
        lastSeq: log.lastSeq,
        messages: log.messages.length,
        activeRequestId: log.activeRun?.requestId ?? null,
        undelivered: log.undelivered.map((run) => run.requestId),
      });
    }
    if (checked.family === 'run') {
      const run = (perFile.run ?? new RunFold()).finish();
      for (const finding of run.findings) sink.add(finding);
      if (run.runId !== undefined && !isValidIdentifier(run.runId)) {
        sink.add(
          makeFinding('invalid_run_id', explainInvalidIdentifier(run.runId), { file: file.path, run_id: run.runId }),
        );
      }
      runs.push({ ...run, file: file.path });
    }
  }
  // stale_state compares a snapshot with the run it names (TJ-STATE-006), so it waits until every run is read.
  for (const state of states)
    if (state.status === 'valid')
      for (const finding of checkStaleState(state.state, runs, { file: state.file })) sink.add(finding);
  const sessions = folds.sessions();
  for (const session of sessions) for (const finding of session.findings) sink.add(finding);
  return { files, sessions, runs, eventLogs, findings: sink.findings, omitted: withFoldOmissions(sink, sessions) };
}

/**
 * What the sink left out plus what the turn folds left out: the folds cap their own findings, so that hostile input
 * never builds millions of finding objects before the sink sees them.
 */
function withFoldOmissions(sink: FindingSink, sessions: readonly DerivedSession[]): Record<string, number> {
  const omitted: Record<string, number> = { ...sink.omitted };
  for (const session of sessions)
    for (const [code, count] of Object.entries(session.omitted)) omitted[code] = (omitted[code] ?? 0) + count;
  return omitted;
}

/** The folds of one run file or event log. */
interface PerFileFolds {
  run?: RunFold;
  event?: EventLogFold;
}

async function checkJournalFile(
  file: StoreFile,
  items: AsyncIterable<JournalItem[]>,
  sink: FindingSink,
  foldOf: (sessionId: string) => TurnFold,
  perFile: PerFileFolds,
): Promise<CheckedFile> {
  let family: RecordFamily | undefined;
  let mixedReported = false;
  let records = 0;
  // The last line read, for the finding when reading stops early.
  let lastLine = 0;
  let recordFinding: Finding | undefined;
  let skipRecordFindings = false;
  // Resolved once per file, not per record.
  let turn: { fold: TurnFold; source: { file: string; sessionId: string } } | undefined;
  const route = (record: JournalRecord) => {
    if (family === 'turn') {
      if (turn === undefined) {
        const sessionId = turnSessionOf(file);
        turn = { fold: foldOf(sessionId), source: { file: file.path, sessionId } };
      }
      turn.fold.add(record, turn.source);
    } else if (family === 'run') {
      perFile.run ??= new RunFold();
      perFile.run.add(record, { file: file.path });
    } else if (family === 'event') {
      perFile.event ??= new EventLogFold();
      perFile.event.add(record, { file: file.path });
    }
  };
  try {
    for await (const batch of items) {
      for (const item of batch) {
        if (item.kind === 'finding') {
          // A record's own finding comes just before it; hold it until the record says whether it still applies.
          if (RECORD_FINDING_CODES.has(item.finding.code)) recordFinding = item.finding;
          else sink.add(item.finding);
          continue;
        }
        const held = recordFinding;
        recordFinding = undefined;
        records += 1;
        lastLine = item.record.line;
        const { validation } = item.record;
        const recordFamily = validation.classification.family;
        // A run header of another major version governs its whole file (TJ-COMPAT-012): the fold reports it once,
        // and the records after it are not judged by v1 rules.
        if (family === undefined && recordFamily === 'run' && validation.status === 'unsupported_version')
          skipRecordFindings = true;
        if (held !== undefined && !skipRecordFindings) sink.add(held);
        if (recordFamily === 'none' || recordFamily === 'unknown') continue;
        // A JSONL file is never a state document: a state-shaped line is another family's record (TJ-FAM-009).
        if (recordFamily !== 'state') family ??= recordFamily;
        if (recordFamily !== family) {
          if (!mixedReported) {
            const where = { file: file.path, line: item.record.line, offset: item.record.offset };
            const what = family === undefined ? 'a JSONL journal' : `a ${family} file`;
            sink.add(
              makeFinding(
                'mixed_families',
                `a ${recordFamily} record in ${what}; records of other families are ignored`,
                where,
              ),
            );
            mixedReported = true;
          }
          continue;
        }
        route(item.record);
      }
    }
  } catch (error) {
    // Whatever stopped the reading (an I/O error, a permission, a record the reader could not process), the rest of
    // the file was not derived: never a clean verdict (TJ-AUDIT-015), so a sweep never prunes on a partial view.
    const finding = (error as { finding?: Finding }).finding;
    if (finding !== undefined && finding.severity !== 'info') sink.add(finding);
    else sink.add(incompleteRead(file.path, error, lastLine));
  }
  const resolved = family ?? file.hint.family;
  if (resolved === undefined) {
    sink.add(makeFinding('unrecognised_file', 'no record of any family and no layout hint', { file: file.path }));
  }
  return { path: file.path, family: resolved ?? 'unknown', records };
}

/** The `incomplete_read` finding of a file whose reading stopped after `lastLine` (0: before its first record). */
function incompleteRead(path: string, error: unknown, lastLine: number): Finding {
  const why = error instanceof Error ? ((error as NodeJS.ErrnoException).code ?? error.message) : String(error);
  const where = lastLine === 0 ? 'from its start' : `after line ${lastLine}`;
  return makeFinding('incomplete_read', `the file could not be read to its end (${why}); nothing ${where} is derived`, {
    file: path,
  });
}

/** Longest stretch, in milliseconds, a store check runs without letting the event loop turn. */
const MAX_BUSY_MS = 10;

/**
 * Lets timers and I/O callbacks run when the check has kept the event loop busy for {@link MAX_BUSY_MS}. The
 * `setImmediate` of `node:timers`, not the global one, so that fake timers installed by a caller's tests cannot stall a
 * check.
 */
function makeYielder(): () => Promise<void> {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < MAX_BUSY_MS) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    since = performance.now();
  };
}

/** The session of a turn journal: from its name, `<sid>.jsonl` or `<sid>~<shard>.jsonl` (TJ-FAM-017). */
function turnSessionOf(file: StoreFile): string {
  if (file.hint.family === 'turn') return file.hint.sessionId;
  const name = file.path.split(/[\\/]/).pop() ?? file.path;
  const stem = name.endsWith('.jsonl') ? name.slice(0, -'.jsonl'.length) : name;
  const tilde = stem.indexOf('~');
  return tilde < 0 ? stem : stem.slice(0, tilde);
}

async function readState(
  contents: StoreContents,
  file: StoreFile,
  options: CheckStoreOptions,
  sink: FindingSink,
): Promise<ReadStateResult | undefined> {
  const path = file.path;
  try {
    const result = await contents.document(file, { mode: options.mode ?? 'tolerant' });
    for (const finding of result.findings) sink.add(finding);
    return result;
  } catch (error) {
    const finding = (error as { finding?: Finding }).finding;
    sink.add(finding !== undefined && finding.severity !== 'info' ? finding : incompleteRead(path, error, 0));
    return undefined;
  }
}
