import Type, { type Static } from 'typebox';

/** Outcome of one conformance check. */
export const CheckStatus = Type.Union(
  [
    Type.Literal('passed'),
    Type.Literal('failed'),
    Type.Literal('warning'),
    Type.Literal('skipped'),
    Type.Literal('expected_failure'),
    Type.Literal('stale_expected_failure'),
  ],
  {
    description:
      'failed: a MUST check failed; warning: a check covering only SHOULD requirements failed (TJ-CONF-004); expected_failure: failed and listed in the baseline; stale_expected_failure: listed but passed (TJ-CONF-017).',
  },
);
/** Outcome of one conformance check. */
export type CheckStatus = Static<typeof CheckStatus>;

/** One check of a conformance run. */
export const CheckReport = Type.Object(
  {
    id: Type.String({ description: 'Stable check id, e.g. `reader/store/framing.json#3` or `writer/ack-oracle`.' }),
    title: Type.String(),
    tier: Type.Union([Type.Literal('adapter'), Type.Literal('reader'), Type.Literal('writer')]),
    requirements: Type.Array(Type.String({ pattern: '^TJ-[A-Z]+-[0-9]{3}$' })),
    status: CheckStatus,
    details: Type.Array(Type.String(), { description: 'Why it failed or was skipped.' }),
    timed_out: Type.Optional(
      Type.Boolean({
        description:
          'True when the adapter left a request of the check unanswered within its time limit (TJ-CONF-044): the check failed for want of an answer, not for a wrong one. On a slow or loaded machine, run again with a larger `--timeout-scale`; a hang fails at any scale.',
      }),
    ),
    situations: Type.Integer({
      minimum: 0,
      description:
        'How many independent situations the check exercised: generated stores, kill or race rounds, stores measured (1 for a check of one situation, 0 when skipped). A requirement cited by checks of many situations was tested harder than one cited by a single case.',
    }),
    duration_ms: Type.Number({ minimum: 0 }),
  },
  { additionalProperties: false },
);
/** One check of a conformance run. */
export type CheckReport = Static<typeof CheckReport>;

const Counts = Type.Object(
  {
    passed: Type.Integer({ minimum: 0 }),
    failed: Type.Integer({ minimum: 0 }),
    warning: Type.Integer({ minimum: 0 }),
    skipped: Type.Integer({ minimum: 0 }),
    expected_failure: Type.Integer({ minimum: 0 }),
    stale_expected_failure: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);

const RequirementCounts = Type.Object(
  {
    ...Counts.properties,
    situations: Type.Integer({
      minimum: 0,
      description:
        'The sum of `situations` over the checks citing the requirement that ran (not skipped): how many independent situations exercised it.',
    }),
  },
  { additionalProperties: false },
);

/** The report of `turnjournal conformance` (`--format json`), published as `spec/v1/conformance-report.schema.json`. */
export const ConformanceReport = Type.Object(
  {
    spec: Type.Literal('v1'),
    protocol: Type.Literal(1),
    adapter: Type.Object(
      {
        command: Type.String(),
        name: Type.Optional(Type.String()),
        version: Type.Optional(Type.String()),
        language: Type.Optional(Type.String()),
        levels: Type.Array(Type.String()),
        families: Type.Array(Type.String()),
        durability: Type.Array(Type.String()),
        features: Type.Array(Type.String()),
      },
      { additionalProperties: false, description: 'The command and the claim it made at `start` (TJ-CONF-001).' },
    ),
    options: Type.Object(
      {
        tier: Type.Union([Type.Literal('reader'), Type.Literal('writer'), Type.Literal('all')]),
        runs: Type.Integer({ minimum: 0 }),
        writer_rounds: Type.Integer({ minimum: 0 }),
        seed: Type.Integer(),
        expected_failures: Type.Union([Type.String(), Type.Null()]),
        timeout_ms: Type.Optional(
          Type.Integer({ minimum: 1, description: 'The per-request time limit, scaled (TJ-CONF-029, TJ-CONF-044).' }),
        ),
        timeout_scale: Type.Optional(
          Type.Number({
            exclusiveMinimum: 0,
            description: 'The factor every time limit of the run was multiplied by.',
          }),
        ),
      },
      { additionalProperties: false },
    ),
    ok: Type.Boolean({ description: 'True when no check failed and no baseline entry is stale (exit status 0).' }),
    conformant: Type.Boolean({
      description:
        'True when the run is ok without any expected-failures baseline entry (TJ-CONF-003), is not partial and proved every claimed level (`not_proven` empty): only then does it support a conformance claim.',
    }),
    partial: Type.Boolean({
      description:
        'True when `--only` or `--tier` left out checks the claim calls for: a partial run is never a conformance claim.',
    }),
    not_proven: Type.Array(Type.String(), {
      description:
        'Ids of skipped checks a claimed level needs (for example `writer/fsync-before-ack` without strace): while any is listed the claim is not proven and the exit status is 4.',
    }),
    summary: Counts,
    requirements: Type.Record(Type.String(), RequirementCounts, {
      description:
        'Per requirement id: counts of the checks citing it by status, and the situations those checks exercised.',
    }),
    checks: Type.Array(CheckReport),
  },
  {
    additionalProperties: false,
    $id: 'https://turnjournal.dev/spec/v1/conformance-report.schema.json',
    title: 'turnjournal conformance report',
    description: 'Generated from @turnjournal/conformance; do not edit. The JSON report of `turnjournal conformance`.',
  },
);
/** The report of `turnjournal conformance`. */
export type ConformanceReport = Static<typeof ConformanceReport>;

/** The expected-failures baseline file (`--expected-failures`): checks known to fail, each with a reason. */
export const ExpectedFailures = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    failures: Type.Array(
      Type.Object(
        { check: Type.String({ minLength: 1 }), reason: Type.String({ minLength: 1 }) },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
/** The expected-failures baseline file. */
export type ExpectedFailures = Static<typeof ExpectedFailures>;
