import Type, { type Static } from 'typebox';
import { Finding } from './findings.js';

/** The `$id` of the report schema document (`spec/v1/report.schema.json`). */
export const REPORT_SCHEMA_ID = 'https://turnjournal.dev/spec/v1/report.schema.json';

/** Longest excerpt of content a report may carry (spec TJ-AUDIT-012). */
export const MAX_EXCERPT_BYTES = 64;

/** One derived turn as a report shows it: state and where, never whole content. */
export const ReportTurn = Type.Object(
  {
    turn_id: Type.String(),
    state: Type.String({ description: 'submitted, worker_started, assistant_started, completed or interrupted.' }),
    orphan: Type.Boolean(),
    terminal: Type.Boolean(),
    submitted_at: Type.Optional(Type.Number({ description: 'created_at of the submitted record, epoch seconds.' })),
    ended_at: Type.Optional(Type.Number({ description: 'created_at of the terminal record, epoch seconds.' })),
    reason: Type.Optional(Type.String({ description: 'Interruption reason.' })),
    content_excerpt: Type.Optional(
      Type.String({ description: `At most ${MAX_EXCERPT_BYTES} bytes of the submitted content.` }),
    ),
    content_truncated: Type.Optional(Type.Boolean()),
    attachments: Type.Optional(
      Type.Integer({ minimum: 0, description: 'Number of attachments (their data is never shown).' }),
    ),
  },
  { title: 'ReportTurn' },
);
/** One derived turn as a report shows it. */
export type ReportTurn = Static<typeof ReportTurn>;

/** A session's derived turns. */
export const ReportSession = Type.Object(
  { session_id: Type.String(), files: Type.Array(Type.String()), turns: Type.Array(ReportTurn) },
  { title: 'ReportSession' },
);
/** A session's derived turns. */
export type ReportSession = Static<typeof ReportSession>;

/** A run file's derivation as a report shows it (spec §16): outcome and counts, never model input or output. */
export const ReportRun = Type.Object(
  {
    file: Type.String(),
    run_id: Type.Optional(Type.String()),
    session_id: Type.Optional(Type.String()),
    outcome: Type.String({ description: 'completed, cancelled, error, incomplete, or an unknown outcome as written.' }),
    last_status: Type.Optional(Type.String()),
    llm_calls: Type.Integer({ minimum: 0 }),
    agent_events: Type.Integer({ minimum: 0 }),
  },
  { title: 'ReportRun' },
);
/** A run file's derivation as a report shows it. */
export type ReportRun = Static<typeof ReportRun>;

/** An event log as a report shows it (spec §15): counts and ids, never message content. */
export const ReportEventLog = Type.Object(
  {
    file: Type.String(),
    session_id: Type.Optional(Type.String()),
    last_seq: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
    messages: Type.Integer({ minimum: 0 }),
    active_request_id: Type.Union([Type.String(), Type.Null()]),
    undelivered: Type.Array(Type.String(), { description: 'request_ids of finished runs no client acknowledged.' }),
  },
  { title: 'ReportEventLog' },
);
/** An event log as a report shows it. */
export type ReportEventLog = Static<typeof ReportEventLog>;

/** A file the report read. */
export const ReportFile = Type.Object(
  {
    path: Type.String(),
    family: Type.String({ description: 'turn, event, run, state or unknown.' }),
    records: Type.Integer({ minimum: 0 }),
  },
  { title: 'ReportFile' },
);
/** A file the report read. */
export type ReportFile = Static<typeof ReportFile>;

/** The recovery of one abandoned turn as a report shows it: the steps, never the message content. */
export const ReportRecovery = Type.Object(
  {
    session_id: Type.String(),
    turn_id: Type.String(),
    state: Type.String({ description: 'The turn state before recovery.' }),
    actions: Type.Array(
      Type.String({ description: 'ensure_user_message, ensure_interruption_marker or append_interrupted, in order.' }),
    ),
  },
  { title: 'ReportRecovery' },
);
/** The recovery of one abandoned turn as a report shows it. */
export type ReportRecovery = Static<typeof ReportRecovery>;

const SeverityCounts = Type.Object({
  error: Type.Integer({ minimum: 0 }),
  warn: Type.Integer({ minimum: 0 }),
  info: Type.Integer({ minimum: 0 }),
});

/** The JSON report of `turnjournal check`, `inspect` and `audit` (spec §13.3, TJ-AUDIT-011). */
export const Report = Type.Object(
  {
    spec: Type.Literal('v1'),
    command: Type.String({ description: 'check, inspect or audit.' }),
    mode: Type.String({ description: 'Recovery mode used: tolerant, prefix or strict.' }),
    paths: Type.Array(Type.String()),
    clean: Type.Boolean({ description: 'True when no finding has severity error or warn (spec §13.3).' }),
    summary: Type.Object({
      files: Type.Integer({ minimum: 0 }),
      records: Type.Integer({ minimum: 0 }),
      sessions: Type.Integer({ minimum: 0 }),
      turns: Type.Integer({ minimum: 0 }),
      findings: SeverityCounts,
      omitted: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
        description: 'Findings left out by the per-code cap, by code.',
      }),
    }),
    files: Type.Array(ReportFile),
    sessions: Type.Array(ReportSession),
    runs: Type.Array(ReportRun),
    event_logs: Type.Array(ReportEventLog),
    findings: Type.Array(Finding),
    plan: Type.Optional(
      Type.Array(ReportRecovery, {
        description: 'audit only: the recovery plan, one entry per abandoned turn (spec §12).',
      }),
    ),
  },
  {
    $id: REPORT_SCHEMA_ID,
    title: 'turnjournal report',
    description:
      'Generated from @turnjournal/schema; do not edit. The JSON output of turnjournal check, inspect and audit.',
  },
);
/** The JSON report of `turnjournal check`, `inspect` and `audit`. */
export type Report = Static<typeof Report>;
