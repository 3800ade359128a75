import Type, { type Static } from 'typebox';

/** Version of the adapter protocol this kit speaks (spec/v1/adapter.md). */
export const ADAPTER_PROTOCOL_VERSION = 1;

/** Error codes an adapter answers with (spec/v1/adapter.md §Errors). */
export const ADAPTER_ERROR_CODES = ['unsupported', 'bad_request', 'journal_locked', 'failed', 'refused'] as const;
/** One adapter error code. */
export type AdapterErrorCode = (typeof ADAPTER_ERROR_CODES)[number];

/** Levels an adapter can claim (spec §17.1, TJ-CONF-001). */
export const ADAPTER_LEVELS = ['reader', 'writer'] as const;
/** Record families an adapter can claim (TJ-CONF-001). */
export const ADAPTER_FAMILIES = ['turn', 'event', 'run', 'state'] as const;
/** Durability modes an adapter's writer supports (spec §11.3). */
export const ADAPTER_DURABILITIES = ['every', 'group', 'none'] as const;
/**
 * Optional features: `audit` (turn_journal_* findings and the plan), `replay` (event-log replay, spec §15.4),
 * `lifecycle` (the writer's own decisions: turn submissions and transitions, event-log seqs and runs; adapter.md §5.4),
 * `recovery` (startup recovery of a store's turn journals, spec §12; adapter.md §5.5), `retention` (the sweep of turn
 * journals and the compaction of event logs, spec §14; adapter.md §5.6), `live` (live sessions, spec §18; adapter.md
 * §5.7), `representatives` (each turn's representative records in a `read` result, spec §10.4; adapter.md §4.2),
 * `store-lines` (the writer keeps journals in a record store, not at the paths named: the harness reads back what it
 * holds through `lines`; adapter.md §5.8).
 */
export const ADAPTER_FEATURES = [
  'audit',
  'replay',
  'lifecycle',
  'recovery',
  'retention',
  'live',
  'representatives',
  'store-lines',
] as const;

const Id = Type.Integer({ minimum: 0, description: 'Correlates a response with its request.' });
const Durability = Type.Union([Type.Literal('every'), Type.Literal('group'), Type.Literal('none')]);

/** `start`: the first request; the adapter answers with its capabilities. */
export const StartRequest = Type.Object({ id: Id, op: Type.Literal('start'), protocol: Type.Literal(1) });
/** `read`: read the store at `paths` and derive turns, findings, runs, event logs (and the plan with `audit`). */
export const ReadRequest = Type.Object({
  id: Id,
  op: Type.Literal('read'),
  paths: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, description: 'Absolute paths.' }),
  mode: Type.Optional(Type.Union([Type.Literal('tolerant'), Type.Literal('prefix'), Type.Literal('strict')])),
  audit: Type.Optional(Type.Boolean()),
  max_line_bytes: Type.Optional(
    Type.Integer({
      minimum: 1,
      description: 'The line-size limit to read with, in bytes without the LF (default 16 MiB, TJ-CONF-031).',
    }),
  ),
  representatives: Type.Optional(
    Type.Boolean({
      description:
        "Feature `representatives`: add each turn's representative record of every event name to the result (TJ-CONF-050).",
    }),
  ),
});
/** `replay` (feature `replay`): the records of an event log after a seq (spec §15.4). */
export const ReplayRequest = Type.Object({
  id: Id,
  op: Type.Literal('replay'),
  file: Type.String({ minLength: 1 }),
  after: Type.Integer({ minimum: -1 }),
  epoch: Type.Optional(
    Type.Union([Type.String({ minLength: 1, maxLength: 128 }), Type.Null()], {
      description:
        'The epoch of the log the cursor comes from (spec §6.7); a different one answers `reset` (TJ-REPLAY-018).',
    }),
  ),
});
/** `open` (writer level): take a journal file's lock, create it or repair its torn tail. */
export const OpenRequest = Type.Object({
  id: Id,
  op: Type.Literal('open'),
  file: Type.String({ minLength: 1 }),
  durability: Durability,
});
/** `append` (writer level): append one record as one line; answered once durable in the declared mode. */
export const AppendRequest = Type.Object({
  id: Id,
  op: Type.Literal('append'),
  handle: Type.String({ minLength: 1 }),
  record: Type.Record(Type.String(), Type.Unknown()),
});
/** `close` (writer level): flush, close and release the lock. */
export const CloseRequest = Type.Object({ id: Id, op: Type.Literal('close'), handle: Type.String({ minLength: 1 }) });
/** `lines` (feature `store-lines`): the committed lines of the journal `file` names, as the store holds them. */
export const LinesRequest = Type.Object({
  id: Id,
  op: Type.Literal('lines'),
  file: Type.String({
    minLength: 1,
    description: 'The journal, named as `open` named it; its path ends in a location of the layout (spec §4.4).',
  }),
});
const Identifier = Type.String({ minLength: 1 });
/** `turn_submit` (feature `lifecycle`): submit a user turn through the implementation's turn-journal writer. */
export const TurnSubmitRequest = Type.Object({
  id: Id,
  op: Type.Literal('turn_submit'),
  root: Type.String({
    minLength: 1,
    description: 'The store root; the journal is <root>/_turn_journal/<session_id>.jsonl.',
  }),
  session_id: Identifier,
  turn_id: Identifier,
  content: Type.String(),
});
/** `turn_event` (feature `lifecycle`): record a turn's next step through the implementation's turn-journal writer. */
export const TurnEventRequest = Type.Object({
  id: Id,
  op: Type.Literal('turn_event'),
  root: Type.String({ minLength: 1 }),
  session_id: Identifier,
  turn_id: Identifier,
  event: Type.Union([
    Type.Literal('worker_started'),
    Type.Literal('assistant_started'),
    Type.Literal('completed'),
    Type.Literal('interrupted'),
  ]),
  reason: Type.Optional(Type.String({ minLength: 1 })),
});
/** `event_append` (feature `lifecycle`): append a record through the implementation's event-log writer. */
export const EventAppendRequest = Type.Object({
  id: Id,
  op: Type.Literal('event_append'),
  file: Type.String({ minLength: 1 }),
  type: Type.String({ minLength: 1 }),
  payload: Type.Record(Type.String(), Type.Unknown()),
});
/** `run_step` (feature `lifecycle`, family `run`): write one record of a run through the implementation's run writer. */
export const RunStepRequest = Type.Object({
  id: Id,
  op: Type.Literal('run_step'),
  file: Type.String({ minLength: 1, description: 'The run file; created with its header when it does not exist.' }),
  run_id: Identifier,
  started_at: Type.String({ minLength: 1, description: "The header's started_at, used when the file is new." }),
  step: Type.Union([
    Type.Literal('start'),
    Type.Literal('agent_event'),
    Type.Literal('llm_request'),
    Type.Literal('llm_response'),
    Type.Literal('end'),
  ]),
  input: Type.Optional(Type.Unknown({ description: '`start` (run.start input) and `llm_request`.' })),
  event: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: '`agent_event`.' })),
  seq: Type.Optional(Type.Integer({ minimum: 0, description: '`llm_response`: the seq of the request it answers.' })),
  output: Type.Optional(Type.Unknown({ description: '`llm_response`.' })),
  outcome: Type.Optional(Type.String({ minLength: 1, description: '`end`.' })),
});
/** `state_write` (feature `lifecycle`, family `state`): replace a session's state document through the implementation. */
export const StateWriteRequest = Type.Object({
  id: Id,
  op: Type.Literal('state_write'),
  root: Type.String({
    minLength: 1,
    description: 'The store root; the document is <root>/sessions/state/<session_id>.json.',
  }),
  session_id: Identifier,
  messages: Type.Array(Type.Record(Type.String(), Type.Unknown())),
});
/** `recover` (feature `recovery`): apply startup recovery to the store at `root`, with no host transcript. */
export const RecoverRequest = Type.Object({
  id: Id,
  op: Type.Literal('recover'),
  root: Type.String({ minLength: 1 }),
});
const Now = Type.Integer({ minimum: 0, description: 'The current time, in epoch milliseconds.' });
const WindowSeconds = Type.Optional(
  Type.Number({ minimum: 0, description: "A window, in seconds; absent for the implementation's default (48 hours)." }),
);
/** `sweep` (feature `retention`): the retention sweep of `<root>/_turn_journal` at time `now`. */
export const SweepRequest = Type.Object({
  id: Id,
  op: Type.Literal('sweep'),
  root: Type.String({ minLength: 1 }),
  now: Now,
  window_s: WindowSeconds,
});
/** `compact` (feature `retention`): the compaction of the event log `file` at time `now`. */
export const CompactRequest = Type.Object({
  id: Id,
  op: Type.Literal('compact'),
  file: Type.String({ minLength: 1 }),
  now: Now,
  window_s: WindowSeconds,
  delivery_window_s: WindowSeconds,
});
const LiveSession = {
  root: Type.String({ minLength: 1, description: 'The store root.' }),
  session_id: Identifier,
};
/** `live_open` (feature `live`): open (and recover) a live session, naming the token mode of its next runs. */
export const LiveOpenRequest = Type.Object({
  id: Id,
  op: Type.Literal('live_open'),
  ...LiveSession,
  tokens: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      description:
        'The token mode of the runs the session starts from now on (spec §18.2, TJ-LIVE-066): `durable` or `segments`.',
    }),
  ),
  max_open_sessions: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 1_000_000,
      description:
        'The bound on the sessions of `root` held open at once (TJ-LIVE-065) the harness asks for; applies when this request is the first to name `root` (TJ-CONF-073).',
    }),
  ),
  window_bytes: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 1_073_741_824,
      description:
        "The byte bound of a session's window for live subscribers (TJ-LIVE-030, TJ-LIVE-067) the harness asks for; applies when this request is the first to name `root` (TJ-CONF-074).",
    }),
  ),
});
/** `live_send` (feature `live`): submit a user turn and start its run; idempotent on `request_id`. */
export const LiveSendRequest = Type.Object({
  id: Id,
  op: Type.Literal('live_send'),
  ...LiveSession,
  request_id: Identifier,
  content: Type.String(),
});
/** `live_step` (feature `live`): the run's next step. */
export const LiveStepRequest = Type.Object({
  id: Id,
  op: Type.Literal('live_step'),
  ...LiveSession,
  request_id: Identifier,
  step: Type.Union([
    Type.Literal('delta'),
    Type.Literal('tool_start'),
    Type.Literal('tool_end'),
    Type.Literal('tool_result'),
    Type.Literal('done'),
    Type.Literal('error'),
    Type.Literal('cancel'),
    Type.Literal('system'),
  ]),
  text: Type.Optional(Type.String()),
  tool_call_id: Type.Optional(Identifier),
  tool: Type.Optional(Type.String({ minLength: 1 })),
  args: Type.Optional(Type.Unknown({ description: "`tool_start`: the call's arguments, for its `tool.start`." })),
  is_error: Type.Optional(Type.Boolean({ description: '`tool_end`: whether the call failed, for its `tool.end`.' })),
  output: Type.Optional(Type.String()),
  message: Type.Optional(Type.String()),
  reason: Type.Optional(Type.String({ minLength: 1 })),
});
/** `live_snapshot` (feature `live`): the live snapshot of spec §18.4 for `client_id`. */
export const LiveSnapshotRequest = Type.Object({
  id: Id,
  op: Type.Literal('live_snapshot'),
  ...LiveSession,
  client_id: Type.Optional(Identifier),
});
/** `live_ack` (feature `live`): acknowledge a finished run. */
export const LiveAckRequest = Type.Object({
  id: Id,
  op: Type.Literal('live_ack'),
  ...LiveSession,
  request_id: Identifier,
  client_id: Type.Optional(
    Type.String({
      description:
        'May be empty or long: the live session itself refuses a client id out of its bound (TJ-LIVE-057), answered `refused`.',
    }),
  ),
  through_seq: Type.Optional(Type.Integer({ minimum: 0 })),
});
/** `live_subscribe` (feature `live`): what a subscription with cursor `after` yields. */
export const LiveSubscribeRequest = Type.Object({
  id: Id,
  op: Type.Literal('live_subscribe'),
  ...LiveSession,
  after: Type.Integer({ minimum: -1 }),
  epoch: Type.Optional(
    Type.Union([Type.String({ minLength: 1, maxLength: 128 }), Type.Null()], {
      description:
        'The epoch of the log the cursor comes from (spec §6.7); a different one yields `reset` (TJ-LIVE-020).',
    }),
  ),
  until_seq: Type.Optional(Type.Integer({ minimum: 0 })),
  timeout_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: 60_000 })),
});
/** `stop`: answer, then exit 0. */
export const StopRequest = Type.Object({ id: Id, op: Type.Literal('stop') });

/** Any request the harness sends. */
export const AdapterRequest = Type.Union([
  StartRequest,
  ReadRequest,
  ReplayRequest,
  OpenRequest,
  AppendRequest,
  CloseRequest,
  LinesRequest,
  TurnSubmitRequest,
  TurnEventRequest,
  EventAppendRequest,
  RunStepRequest,
  StateWriteRequest,
  RecoverRequest,
  SweepRequest,
  CompactRequest,
  LiveOpenRequest,
  LiveSendRequest,
  LiveStepRequest,
  LiveSnapshotRequest,
  LiveAckRequest,
  LiveSubscribeRequest,
  StopRequest,
]);
/** Any request the harness sends. */
export type AdapterRequest = Static<typeof AdapterRequest>;
/** The operation names. */
export type AdapterOp = AdapterRequest['op'];

/** `start` result: who the implementation is and what it claims (TJ-CONF-001). */
export const StartResult = Type.Object({
  name: Type.String({ minLength: 1 }),
  version: Type.String(),
  language: Type.String(),
  protocol: Type.Literal(1),
  levels: Type.Array(Type.Union([Type.Literal('reader'), Type.Literal('writer')]), { minItems: 1 }),
  families: Type.Array(
    Type.Union([Type.Literal('turn'), Type.Literal('event'), Type.Literal('run'), Type.Literal('state')]),
    { minItems: 1 },
  ),
  durability: Type.Array(Durability),
  features: Type.Optional(
    Type.Array(
      Type.Union([
        Type.Literal('audit'),
        Type.Literal('replay'),
        Type.Literal('lifecycle'),
        Type.Literal('recovery'),
        Type.Literal('retention'),
        Type.Literal('live'),
        Type.Literal('representatives'),
        Type.Literal('store-lines'),
      ]),
    ),
  ),
});
/** `start` result. */
export type StartResult = Static<typeof StartResult>;

const EventLogState = Type.Object({
  last_seq: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
  messages: Type.Array(Type.Unknown()),
  active_request_id: Type.Union([Type.String(), Type.Null()]),
  overlay: Type.Union([Type.String(), Type.Null()]),
  undelivered: Type.Array(Type.String()),
  epoch: Type.Optional(
    Type.Union([Type.String(), Type.Null()], { description: "The log's epoch (spec §6.7), null for none." }),
  ),
});

/** A tool call of the active run in a live snapshot (TJ-LIVE-063). */
const LiveToolCall = Type.Object({
  tool_call_id: Type.String(),
  tool: Type.String(),
  args: Type.Optional(Type.Unknown()),
  started_ts: Type.String({ description: 'The `ts` of its `tool.start`.' }),
  ended_ts: Type.Union([Type.String(), Type.Null()], {
    description: 'The `ts` of its `tool.end`, null while none came.',
  }),
  is_error: Type.Optional(Type.Boolean({ description: "Its `tool.end`'s `is_error`, when it carried one." })),
});

/** `live_snapshot` result: an event log's state, with the active run's tool calls (TJ-LIVE-063). */
const LiveSnapshotResult = Type.Object({
  ...EventLogState.properties,
  tools: Type.Optional(
    Type.Array(LiveToolCall, { description: "The active run's tool calls, in the order they started." }),
  ),
});

/**
 * Session id → turn id → event name → the record that represents that event name of the turn (spec §10.4,
 * TJ-DERIVE-013), as the JSON value read: the answer to a `read` with `representatives` (TJ-CONF-050).
 */
export const Representatives = Type.Record(
  Type.String(),
  Type.Record(Type.String(), Type.Record(Type.String(), Type.Record(Type.String(), Type.Unknown()))),
);
/** Each turn's representative records, by session, turn and event name. */
export type Representatives = Static<typeof Representatives>;

/** `read` result: the shape of a store fixture's `expect`, with absolute paths. */
export const ReadResult = Type.Object({
  turns: Type.Optional(Type.Record(Type.String(), Type.Record(Type.String(), Type.String()))),
  findings: Type.Array(
    Type.Object({
      code: Type.String({ minLength: 1 }),
      file: Type.Optional(Type.String()),
      line: Type.Optional(Type.Integer({ minimum: 1 })),
      turn_id: Type.Optional(Type.String()),
    }),
  ),
  runs: Type.Optional(Type.Record(Type.String(), Type.String())),
  event_logs: Type.Optional(Type.Record(Type.String(), EventLogState)),
  plan: Type.Optional(
    Type.Array(Type.Object({ session_id: Type.String(), turn_id: Type.String(), actions: Type.Array(Type.String()) })),
  ),
  representatives: Type.Optional(Representatives),
});
/** `read` result. */
export type ReadResult = Static<typeof ReadResult>;

/** `replay` result: the seqs replayed, or why a snapshot is needed. */
export const ReplayResult = Type.Union([
  Type.Object({ seqs: Type.Array(Type.Integer({ minimum: 0 })) }),
  Type.Object({ reason: Type.Union([Type.Literal('compacted'), Type.Literal('ahead'), Type.Literal('reset')]) }),
]);
/** `replay` result. */
export type ReplayResult = Static<typeof ReplayResult>;

/** `open` result: an opaque handle for `append` and `close`. */
export const OpenResult = Type.Object({ handle: Type.String({ minLength: 1 }) });
/** `open` result. */
export type OpenResult = Static<typeof OpenResult>;

/**
 * `lines` result: every committed line of the journal, in order, each as the base64 (RFC 4648 §4, padded) of its exact
 * bytes without the LF that ends it — any bytes, valid UTF-8 or not. A journal the store does not hold has none.
 */
export const LinesResult = Type.Object({
  lines: Type.Array(Type.String({ pattern: '^[A-Za-z0-9+/]*={0,2}$' })),
});

/** The empty result of `append`, `close` and `stop`. */
export const EmptyResult = Type.Object({});

/** `turn_submit` result: whether a `submitted` record was written (false: a retry of the same submission). */
export const TurnSubmitResult = Type.Object({ created: Type.Boolean() });
/** `event_append` result: the seq the writer gave the record. */
export const EventAppendResult = Type.Object({ seq: Type.Integer({ minimum: 0 }) });

/** `run_step` result: for `agent_event` and `llm_request`, the seq the writer gave the record. */
export const RunStepResult = Type.Object({ seq: Type.Optional(Type.Integer({ minimum: 0 })) });

/** `recover` result: the turns recovery closed as interrupted, in the order it closed them. */
export const RecoverResult = Type.Object({
  recovered: Type.Array(Type.Object({ session_id: Type.String(), turn_id: Type.String() })),
});

/** `sweep` result: the turns pruned, per session. */
export const SweepResult = Type.Object({
  sessions: Type.Array(Type.Object({ session_id: Type.String(), pruned: Type.Array(Type.String()) })),
});
/** `compact` result: the lines removed and the runs whose delivery expired. */
export const CompactResult = Type.Object({
  removed_records: Type.Integer({ minimum: 0 }),
  expired: Type.Array(Type.String()),
});

/** `live_open` result: the session's last durable seq, and the bounds it states for client ids and open sessions. */
export const LiveOpenResult = Type.Object({
  last_seq: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
  client_id_max: Type.Optional(
    Type.Integer({
      minimum: 1,
      description: 'The most characters of a client id the session records in an acknowledgement (TJ-LIVE-057).',
    }),
  ),
  max_open_sessions: Type.Optional(
    Type.Integer({
      minimum: 1,
      description: 'The most sessions of `root` the server holds open at once (TJ-LIVE-065, TJ-CONF-073).',
    }),
  ),
  window_bytes: Type.Optional(
    Type.Integer({
      minimum: 1,
      description: "The byte bound of a session's window for live subscribers (TJ-LIVE-030, TJ-CONF-074).",
    }),
  ),
});
/** `live_send` result: whether a run was started, and the run's status. */
export const LiveSendResult = Type.Object({
  created: Type.Boolean(),
  status: Type.Union([
    Type.Literal('running'),
    Type.Literal('done'),
    Type.Literal('error'),
    Type.Literal('cancelled'),
    Type.Literal('interrupted'),
  ]),
});
/** `live_subscribe` result: the events the subscription yielded, in order. */
export const LiveSubscribeResult = Type.Object({
  events: Type.Array(
    Type.Union([
      Type.Object({ seq: Type.Integer({ minimum: 0 }) }),
      Type.Object({
        snapshot: Type.Union([Type.Literal('compacted'), Type.Literal('ahead'), Type.Literal('reset')]),
        last_seq: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
      }),
      Type.Object({ cut_off: Type.Integer({ minimum: -1 }) }),
    ]),
  ),
});
/** `live_subscribe` result. */
export type LiveSubscribeResult = Static<typeof LiveSubscribeResult>;

/** The result schema of each operation, which the runner validates every success against (TJ-CONF-012). */
export const RESULT_SCHEMAS = {
  start: StartResult,
  read: ReadResult,
  replay: ReplayResult,
  open: OpenResult,
  append: EmptyResult,
  close: EmptyResult,
  lines: LinesResult,
  turn_submit: TurnSubmitResult,
  turn_event: EmptyResult,
  event_append: EventAppendResult,
  run_step: RunStepResult,
  state_write: EmptyResult,
  recover: RecoverResult,
  sweep: SweepResult,
  compact: CompactResult,
  live_open: LiveOpenResult,
  live_send: LiveSendResult,
  live_step: EmptyResult,
  live_snapshot: LiveSnapshotResult,
  live_ack: EmptyResult,
  live_subscribe: LiveSubscribeResult,
  stop: EmptyResult,
} as const;

/** A success response. Unknown members are ignored, as everywhere in turnjournal. */
export const SuccessResponse = Type.Object({
  id: Id,
  ok: Type.Literal(true),
  result: Type.Record(Type.String(), Type.Unknown()),
});
/** An error response (TJ-CONF-015). */
export const ErrorResponse = Type.Object({
  id: Id,
  ok: Type.Literal(false),
  error: Type.Object({
    code: Type.Union([
      Type.Literal('unsupported'),
      Type.Literal('bad_request'),
      Type.Literal('journal_locked'),
      Type.Literal('failed'),
      Type.Literal('refused'),
    ]),
    message: Type.String(),
  }),
});
/** Any response line an adapter writes to stdout (TJ-CONF-012). */
export const AdapterResponse = Type.Union([SuccessResponse, ErrorResponse]);
/** Any response. */
export type AdapterResponse = Static<typeof AdapterResponse>;

/** Every message of the protocol, for the published JSON Schema `spec/v1/adapter.schema.json`. */
export const AdapterMessages = Type.Object(
  {
    request: AdapterRequest,
    response: AdapterResponse,
    results: Type.Object(RESULT_SCHEMAS),
  },
  {
    $id: 'https://turnjournal.dev/spec/v1/adapter.schema.json',
    title: 'turnjournal adapter protocol v1',
    description:
      'Generated from @turnjournal/conformance; do not edit. `request` is any request line, `response` any response line, `results` the result of each op.',
  },
);
