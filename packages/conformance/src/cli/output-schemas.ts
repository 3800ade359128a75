import Type, { type Static } from 'typebox';

// The JSON printed by `turnjournal recover`, `compact` and `validate --format json`, published as
// spec/v1/{recover,compact,validate}.schema.json. Every member name is snake_case, as in the check report
// (report.schema.json) and the conformance report, so one convention holds across every command.

const RecoveryStep = Type.Object(
  {
    kind: Type.String({ description: 'ensure_user_message, ensure_interruption_marker or append_interrupted.' }),
    submitted: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: 'ensure_user_message: the submitted record to restore into the host transcript.',
      }),
    ),
    record: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), { description: 'append_interrupted: the record to append.' }),
    ),
  },
  { additionalProperties: false },
);

/** The JSON output of `turnjournal recover` (spec §12). */
export const RecoverOutput = Type.Object(
  {
    command: Type.Literal('recover'),
    applied: Type.Boolean({ description: 'True with --apply: the plan was performed, not only printed.' }),
    complete: Type.Boolean({
      description:
        'False when something planned or pending was left alone (a live writer holds a journal, or a turn or event log was skipped for a reason other than having finished meanwhile); `recover --apply` then exits 1.',
    }),
    plan: Type.Array(
      Type.Object(
        {
          session_id: Type.String(),
          turn_id: Type.String(),
          state: Type.String({ description: 'The derived state before recovery.' }),
          actions: Type.Array(RecoveryStep),
        },
        { additionalProperties: false },
      ),
      { description: 'The abandoned turns and their steps, in order (TJ-RECOV-001).' },
    ),
    turns: Type.Array(
      Type.Object(
        {
          session_id: Type.String(),
          turn_id: Type.String(),
          outcome: Type.Union([Type.Literal('recovered'), Type.Literal('skipped')]),
          performed: Type.Array(Type.String()),
          reason: Type.Optional(Type.String({ description: 'Why the turn was skipped.' })),
        },
        { additionalProperties: false },
      ),
      { description: 'What was done per planned turn; empty without --apply.' },
    ),
    held_files: Type.Array(Type.String(), { description: 'Journal files a live writer holds, left alone.' }),
    event_logs: Type.Array(
      Type.Object(
        {
          file: Type.String(),
          cancelled: Type.Array(
            Type.Object({ request_id: Type.String(), seq: Type.Integer() }, { additionalProperties: false }),
          ),
          skipped: Type.Optional(Type.String({ description: 'Why the log was left alone.' })),
        },
        { additionalProperties: false },
      ),
      { description: 'Event logs with a run that never finished (TJ-RECOV-011).' },
    ),
    settled: Type.Optional(
      Type.Array(
        Type.Object(
          {
            file: Type.String(),
            trimmed_bytes: Type.Integer({ minimum: 0, description: 'Pre-allocated space (and a torn tail) cut off.' }),
            removed_lock: Type.Boolean({ description: 'A lock left by a writer that is gone, removed.' }),
          },
          { additionalProperties: false },
        ),
        {
          description:
            'Applied: files whose writer is gone, left plain JSONL at rest (TJ-RECOV-014); empty without --apply.',
        },
      ),
    ),
  },
  {
    $id: 'https://turnjournal.dev/spec/v1/recover.schema.json',
    title: 'turnjournal recover output',
    description: 'Generated from @turnjournal/conformance; do not edit. `turnjournal recover --format json`.',
    additionalProperties: false,
  },
);
/** The JSON output of `turnjournal recover`. */
export type RecoverOutput = Static<typeof RecoverOutput>;

/** The JSON output of `turnjournal compact` (spec §14). */
export const CompactOutput = Type.Object(
  {
    command: Type.Literal('compact'),
    dry_run: Type.Boolean(),
    sweeps: Type.Array(
      Type.Object(
        {
          dir: Type.String({ description: 'The turn journal directory swept.' }),
          sessions: Type.Array(
            Type.Object(
              {
                session_id: Type.String(),
                pruned_turn_ids: Type.Array(Type.String(), { description: 'Removed, or in a dry run, would be.' }),
                rewritten_files: Type.Array(Type.String()),
                skipped: Type.Optional(Type.String({ description: 'Why nothing was pruned.' })),
              },
              { additionalProperties: false },
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    event_logs: Type.Array(
      Type.Union([
        Type.Object(
          {
            file: Type.String(),
            skipped: Type.String({
              description: 'Why the log was left alone: a live process holds it and compacts it.',
            }),
          },
          { additionalProperties: false },
        ),
        Type.Object(
          {
            file: Type.String(),
            compacted: Type.Boolean(),
            expired_runs: Type.Array(Type.String(), {
              description: 'Finished runs nobody acknowledged within the delivery window, counted as delivered.',
            }),
            removed_records: Type.Integer({ minimum: 0 }),
            removed_damaged_lines: Type.Integer({ minimum: 0 }),
            removed_bytes: Type.Integer({ minimum: 0 }),
            checkpoint_seq: Type.Union([Type.Integer(), Type.Null()]),
            first_retained_seq: Type.Union([Type.Integer(), Type.Null()]),
            reason: Type.Optional(Type.String({ description: 'Why nothing was removed.' })),
            blocked_by: Type.Optional(
              Type.Object(
                {
                  offset: Type.Integer({ minimum: 0 }),
                  seq: Type.Union([Type.Integer(), Type.Null()]),
                  request_id: Type.Optional(Type.String()),
                },
                { additionalProperties: false },
              ),
            ),
          },
          { additionalProperties: false },
        ),
      ]),
      { description: 'One compaction, or one skip, per event log; empty in a dry run.' },
    ),
  },
  {
    $id: 'https://turnjournal.dev/spec/v1/compact.schema.json',
    title: 'turnjournal compact output',
    description: 'Generated from @turnjournal/conformance; do not edit. `turnjournal compact --format json`.',
    additionalProperties: false,
  },
);
/** The JSON output of `turnjournal compact`. */
export type CompactOutput = Static<typeof CompactOutput>;

/** The JSON output of `turnjournal validate`. */
export const ValidateOutput = Type.Object(
  {
    files: Type.Array(
      Type.Object({
        path: Type.String(),
        counts: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
          description: 'Records per verdict (valid, unknown, extension, unsupported_version, invalid).',
        }),
        problems: Type.Array(
          Type.Object({
            code: Type.String(),
            line: Type.Integer({ minimum: 0 }),
            message: Type.String(),
            errors: Type.Optional(
              Type.Array(
                Type.Object({
                  pointer: Type.String(),
                  keyword: Type.String(),
                  expected: Type.String(),
                  received: Type.String(),
                  message: Type.String(),
                }),
              ),
            ),
          }),
          {
            description:
              'At most 1,000 per code in a file and 10,000 per code over the run (spec TJ-AUDIT-013, TJ-AUDIT-016).',
          },
        ),
        omitted: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
          description: 'Problems of this file left out of `problems` by the caps, per code.',
        }),
      }),
    ),
    omitted: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
      description: 'Problems left out by the caps over every file, per code.',
    }),
  },
  {
    $id: 'https://turnjournal.dev/spec/v1/validate.schema.json',
    title: 'turnjournal validate output',
    description: 'Generated from @turnjournal/conformance; do not edit. `turnjournal validate --format json`.',
  },
);
/** The JSON output of `turnjournal validate`. */
export type ValidateOutput = Static<typeof ValidateOutput>;
