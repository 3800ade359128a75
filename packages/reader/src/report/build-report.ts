import type { Finding, Report, ReportTurn } from '@turnjournal/schema';
import type { RecoveryPlan } from '../audit/plan-recovery.js';
import type { StoreCheck } from '../store/check-store.js';
import { type TurnsOf, turnsOf } from '../store/session-folds.js';
import type { DerivedTurn } from '../turn/derive-turns.js';

/** What the report is about: the command, the recovery mode and the paths given. */
export interface ReportContext {
  /** `check`, `inspect` or `audit`. */
  readonly command: string;
  /** Recovery mode used. */
  readonly mode: string;
  /** Paths the user gave. */
  readonly paths: readonly string[];
  /** The recovery plan, for `audit` (an array of recoveries is one too). */
  readonly plan?: RecoveryPlan;
}

/** True when no finding has severity `error` or `warn` (spec §13.3). */
export function isClean(findings: readonly Finding[]): boolean {
  return findings.every((f) => f.severity === 'info');
}

/**
 * A report whose `files`, `sessions`, each session's `turns` and `plan` are built one element at a time, on each
 * iteration, from the store check and the recovery plan: a writer that prints a store of a million turns in pieces
 * then never holds the report of more than one turn, nor of more than one planned turn (issue 11). Its members come in
 * the order of the report schema's; `buildReport` is this report with the lists made arrays.
 */
export interface StreamedReport extends Omit<Report, 'files' | 'sessions' | 'plan'> {
  /** The files read, as the report schema's `files` lists them. */
  readonly files: Iterable<Report['files'][number]>;
  /** The turn sessions, as its `sessions` lists them, each built when the iteration reaches it, turns likewise. */
  readonly sessions: Iterable<StreamedSession>;
  /** The recovery plan of an audit, as its `plan` lists it, each entry built when the iteration reaches it. */
  readonly plan?: Iterable<NonNullable<Report['plan']>[number]> & { readonly length: number };
}

/** A session of a {@link StreamedReport}: the report schema's, with its turns built on iteration. */
export interface StreamedSession extends Omit<Report['sessions'][number], 'turns'> {
  /** The session's turns, as the report schema's `turns` lists them, each built when the iteration reaches it. */
  readonly turns: Iterable<ReportTurn> & { readonly length: number };
}

/**
 * An iterable that maps `items` anew on each iteration, keeping nothing, with the length of `items`. A class, not an
 * object literal with a generator method: a literal made per session gave each list a closure of its own and V8 a
 * hidden class of its own, which lives in the old generation until a mark-compact. Printing the report of 100,000
 * sessions filled the old generation with them (issue 11: many-sessions audit over 256 MiB; the figure is in
 * bench/results/history.md, "Figures that were in code comments").
 */
class MappedList<T, U> implements Iterable<U> {
  readonly #items: Iterable<T> & { readonly length: number };
  readonly #map: (item: T) => U;

  constructor(items: Iterable<T> & { readonly length: number }, map: (item: T) => U) {
    this.#items = items;
    this.#map = map;
  }

  get length(): number {
    return this.#items.length;
  }

  *[Symbol.iterator](): Iterator<U> {
    for (const item of this.#items) yield this.#map(item);
  }
}

function mapped<T, U>(
  items: Iterable<T> & { readonly length: number },
  map: (item: T) => U,
): Iterable<U> & { readonly length: number } {
  return new MappedList(items, map);
}

/**
 * Builds the JSON report (schema `spec/v1/report.schema.json`) of a store check with its file and session lists left
 * lazy (see {@link StreamedReport}): for writing a large store's report out in pieces.
 */
export function buildStreamedReport(check: StoreCheck, context: ReportContext): StreamedReport {
  return buildStreamedReportOf(check, context, turnsOf);
}

/**
 * {@link buildStreamedReport} with each session's turns given by `sessionTurns`: for a check or an audit that lists its
 * turns instead of keeping them (checkStoreListing), whose sessions' `turns` are empty. Internal to the reader.
 */
export function buildStreamedReportOf(
  check: StoreCheck,
  context: ReportContext,
  sessionTurns: TurnsOf,
): StreamedReport {
  const counts = { error: 0, warn: 0, info: 0 };
  for (const finding of check.findings) counts[finding.severity] += 1;
  return {
    spec: 'v1',
    command: context.command,
    mode: context.mode,
    paths: [...context.paths],
    clean: isClean(check.findings),
    summary: {
      files: check.files.length,
      records: check.files.reduce((n, f) => n + f.records, 0),
      sessions: check.sessions.length,
      turns: check.sessions.reduce((n, s) => n + s.turnCount, 0),
      findings: counts,
      omitted: { ...check.omitted },
    },
    files: mapped(check.files, (f) => ({ path: f.path, family: f.family, records: f.records })),
    sessions: mapped(check.sessions, (session) => ({
      session_id: session.sessionId,
      files: [...session.files],
      turns: mapped(sessionTurns(session), reportTurn),
    })),
    runs: check.runs.map((run) => ({
      file: run.file,
      ...(run.runId === undefined ? {} : { run_id: run.runId }),
      ...(run.sessionId === undefined ? {} : { session_id: run.sessionId }),
      outcome: run.outcome,
      ...(run.lastStatus === undefined ? {} : { last_status: run.lastStatus }),
      llm_calls: run.llmCalls.length,
      agent_events: run.agentEventCount,
    })),
    event_logs: check.eventLogs.map((log) => ({
      file: log.file,
      ...(log.sessionId === undefined ? {} : { session_id: log.sessionId }),
      last_seq: log.lastSeq,
      messages: log.messages,
      active_request_id: log.activeRequestId,
      undelivered: [...log.undelivered],
    })),
    findings: [...check.findings],
    ...(context.plan === undefined
      ? {}
      : {
          plan: mapped(context.plan, (r) => ({
            session_id: r.sessionId,
            turn_id: r.turnId,
            state: r.state,
            actions: r.actions.map((a) => a.kind),
          })),
        }),
  };
}

/** Builds the JSON report (schema `spec/v1/report.schema.json`) of a store check. */
export function buildReport(check: StoreCheck, context: ReportContext): Report {
  const streamed = buildStreamedReport(check, context);
  // Redefined members keep their place: the report's member order is the streamed one's.
  const { plan, ...rest } = streamed;
  const sessions = Array.from(streamed.sessions, (session) => ({ ...session, turns: [...session.turns] }));
  const report: Report = { ...rest, files: [...streamed.files], sessions };
  return plan === undefined ? report : { ...report, plan: [...plan] };
}

function reportTurn(turn: DerivedTurn): ReportTurn {
  // Read once: a derived turn builds its events on each read (see DerivedTurn.events).
  const events = turn.events;
  const submitted = events.submitted?.summary;
  const terminal = (events.completed ?? events.interrupted)?.summary;
  const out: { -readonly [K in keyof ReportTurn]: ReportTurn[K] } = {
    turn_id: turn.turnId,
    state: turn.state,
    orphan: turn.orphan,
    terminal: turn.terminal,
  };
  if (submitted?.createdAt !== undefined) out.submitted_at = submitted.createdAt;
  if (terminal?.createdAt !== undefined) out.ended_at = terminal.createdAt;
  const reason = events.interrupted?.summary.reason;
  if (turn.state === 'interrupted' && reason !== undefined) out.reason = reason;
  if (submitted?.contentExcerpt !== undefined) {
    out.content_excerpt = submitted.contentExcerpt;
    out.content_truncated = submitted.contentTruncated ?? false;
  }
  if (submitted?.attachments !== undefined) out.attachments = submitted.attachments;
  return out;
}
