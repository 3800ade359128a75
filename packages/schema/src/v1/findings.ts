import Type, { type Static } from 'typebox';

/** How serious a finding is: `error` (data lost or unreadable), `warn` (tolerated anomaly), `info` (benign). */
export const FINDING_SEVERITIES = ['error', 'warn', 'info'] as const;
/** How serious a finding is. */
export type FindingSeverity = (typeof FINDING_SEVERITIES)[number];

/** Default severity and repairability of a finding code (spec §13.1). */
export interface FindingCodeInfo {
  /** Default severity; a few codes change it with context (spec §13.2). */
  readonly severity: FindingSeverity;
  /** Whether the reference repair or recovery fixes it without losing acknowledged data. */
  readonly repairable: boolean;
}

/** Every finding code of spec §13.1 with its default severity and repairability (TJ-AUDIT-001, TJ-AUDIT-002). */
export const FINDING_CODES = {
  torn_tail: { severity: 'warn', repairable: true },
  malformed_line: { severity: 'error', repairable: false },
  glued_record: { severity: 'warn', repairable: false },
  zero_filled_region: { severity: 'error', repairable: false },
  oversized_line: { severity: 'error', repairable: false },
  blank_line: { severity: 'info', repairable: false },
  malformed_document: { severity: 'error', repairable: false },
  unknown_record: { severity: 'info', repairable: false },
  unsupported_version: { severity: 'warn', repairable: false },
  invalid_record: { severity: 'error', repairable: false },
  mixed_families: { severity: 'error', repairable: false },
  unrecognised_file: { severity: 'info', repairable: false },
  invalid_session_id: { severity: 'error', repairable: false },
  invalid_run_id: { severity: 'error', repairable: false },
  session_mismatch: { severity: 'warn', repairable: false },
  run_id_mismatch: { severity: 'warn', repairable: false },
  event_after_terminal: { severity: 'warn', repairable: false },
  terminal_conflict: { severity: 'warn', repairable: false },
  duplicate_event: { severity: 'info', repairable: false },
  conflicting_duplicate: { severity: 'warn', repairable: false },
  orphan_turn: { severity: 'warn', repairable: false },
  turn_journal_pending_turn: { severity: 'warn', repairable: true },
  turn_journal_interrupted_turn: { severity: 'info', repairable: false },
  turn_journal_malformed_event: { severity: 'error', repairable: false },
  seq_gap: { severity: 'warn', repairable: false },
  // Errors: no crash and no compaction leaves a repeated or falling seq (a crash leaves a torn tail or a hole,
  // `seq_gap`); two writers appending to one file do (TJ-EVENT-027), and `check` must fail on that.
  seq_duplicate: { severity: 'error', repairable: false },
  seq_regression: { severity: 'error', repairable: false },
  abandoned_run: { severity: 'warn', repairable: true },
  duplicate_run_start: { severity: 'warn', repairable: false },
  inapplicable_event: { severity: 'warn', repairable: false },
  epoch_conflict: { severity: 'error', repairable: false },
  incomplete_checkpoint: { severity: 'warn', repairable: false },
  record_after_run_end: { severity: 'warn', repairable: false },
  missing_header: { severity: 'warn', repairable: false },
  unpaired_llm_request: { severity: 'warn', repairable: false },
  unpaired_llm_response: { severity: 'warn', repairable: false },
  agent_event_seq_regression: { severity: 'warn', repairable: false },
  stale_state: { severity: 'warn', repairable: false },
  stale_lock: { severity: 'info', repairable: true },
  incomplete_read: { severity: 'error', repairable: false },
  special_file: { severity: 'warn', repairable: false },
  writer_violation_crlf: { severity: 'info', repairable: false },
  writer_violation_bom: { severity: 'info', repairable: false },
  writer_violation_unescaped_separator: { severity: 'info', repairable: false },
} as const satisfies Record<string, FindingCodeInfo>;

/** A finding code of spec §13.1. */
export type FindingCode = keyof typeof FINDING_CODES;

/** One finding: what was found, how serious it is, and exactly where (TJ-AUDIT-003). */
export const Finding = Type.Object(
  {
    code: Type.String({ description: 'Stable snake_case code (spec §13.1).' }),
    severity: Type.Union([Type.Literal('error'), Type.Literal('warn'), Type.Literal('info')]),
    repairable: Type.Boolean(),
    message: Type.String({ description: 'One readable sentence; content is truncated, attachments omitted.' }),
    file: Type.Optional(Type.String({ description: 'File the finding concerns.' })),
    line: Type.Optional(Type.Integer({ minimum: 1, description: '1-based line number.' })),
    offset: Type.Optional(Type.Integer({ minimum: 0, description: '0-based byte offset of the line or region.' })),
    length: Type.Optional(Type.Integer({ minimum: 0, description: 'Length in bytes of the region concerned.' })),
    session_id: Type.Optional(Type.String()),
    turn_id: Type.Optional(Type.String()),
    run_id: Type.Optional(Type.String()),
  },
  { title: 'Finding', description: 'One finding of a check or audit.' },
);
/** One finding of a check or audit. */
export type Finding = Static<typeof Finding>;

/** Where a finding is, when it concerns a file or a line. */
export type FindingLocation = Pick<
  Finding,
  'file' | 'line' | 'offset' | 'length' | 'session_id' | 'turn_id' | 'run_id'
>;

/** Builds a finding with the default severity and repairability of its code. */
export function makeFinding(code: FindingCode, message: string, location: FindingLocation = {}): Finding {
  const info: FindingCodeInfo = FINDING_CODES[code];
  return { code, severity: info.severity, repairable: info.repairable, message, ...location };
}
