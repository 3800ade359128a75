import Type, { type Static, type TProperties } from 'typebox';
import { Count, Id, Message, Meta, ModelInfo, Nullable, OpenEnum, Timestamp } from './common.js';

/** Known `run.status` values; the set is open (seed 004 §9). */
export const RUN_STATUSES = ['running', 'awaiting_ui', 'completed', 'error', 'cancelled'] as const;
/** Known `run.end` outcomes; the set is open. */
export const RUN_OUTCOMES = ['completed', 'cancelled', 'error'] as const;

const runId = Id('Run id (a UUID in the reference layout).');

function runRecord<const T extends string, P extends TProperties>(
  type: T,
  title: string,
  properties: P,
  description: string,
) {
  return Type.Object(
    {
      type: Type.Literal(type),
      run_id: runId,
      ts: Timestamp('When the record was written.'),
      ...properties,
      meta: Type.Optional(Meta),
    },
    { title, description },
  );
}

const NameVersion = Type.Object({ name: Type.String(), version: Type.String() });

/** `header`: first record of a run file; its `schema_version` governs the whole file. */
export const RunHeader = Type.Object(
  {
    type: Type.Literal('header'),
    schema_version: Type.Literal(1, { description: 'Major version of the run record format.' }),
    run_id: runId,
    session_id: Type.Optional(Id('Session the run belongs to.')),
    started_at: Timestamp('When the run started.'),
    client: Type.Optional(NameVersion),
    server: Type.Optional(NameVersion),
    model: Type.Optional(ModelInfo),
    prompts: Type.Optional(Type.Object({ system: Type.Optional(Type.String()) })),
    tools: Type.Optional(
      Type.Object({ definitions: Type.Optional(Type.Array(Type.Unknown())), source: Type.Optional(Type.String()) }),
    ),
    runtime: Type.Optional(
      Type.Object({
        cwd: Type.Optional(Type.String()),
        os: Type.Optional(Type.String()),
        arch: Type.Optional(Type.String()),
        version: Type.Optional(Type.String()),
      }),
    ),
    meta: Type.Optional(Meta),
  },
  { title: 'RunHeader', description: 'First record of a run file.' },
);
/** First record of a run file. */
export type RunHeader = Static<typeof RunHeader>;

/** The input of a run: text, parts, or a future shape with another `type`. */
export const RunInput = Type.Union(
  [
    Type.Object({ type: Type.Literal('text'), text: Type.String() }),
    Type.Object({ type: Type.Literal('parts'), parts: Type.Array(Type.Object({ type: Type.String() })) }),
    Type.Object({ type: Type.String({ not: { enum: ['text', 'parts'] } }) }),
  ],
  { title: 'RunInput', description: 'Run input: `text`, `parts`, or another type (open).' },
);
/** Run input: `text`, `parts`, or another type. */
export type RunInput = Static<typeof RunInput>;

/** `run.start`: the run's input. */
export const RunStart = runRecord(
  'run.start',
  'RunStart',
  {
    session_id: Type.Optional(Id('Session the run belongs to.')),
    input: RunInput,
    ui_context: Type.Optional(Type.Unknown()),
  },
  'The run started with this input.',
);
/** The run started with this input. */
export type RunStart = Static<typeof RunStart>;

/** `run.context`: how much model context is left. */
export const RunContext = runRecord(
  'run.context',
  'RunContext',
  { context_left_percent: Type.Number() },
  'Remaining context.',
);
/** Remaining context. */
export type RunContext = Static<typeof RunContext>;

/** `agent.event`: a UI playback event; `seq` starts at 0 per run, is monotonic and may have gaps. */
export const RunAgentEvent = runRecord(
  'agent.event',
  'RunAgentEvent',
  { seq: Count('Playback order within the run.'), event: Type.Object({ type: Type.String() }) },
  'An agent event for UI playback.',
);
/** An agent event for UI playback. */
export type RunAgentEvent = Static<typeof RunAgentEvent>;

/** `tool.output`: the full output of one tool call. */
export const RunToolOutput = runRecord(
  'tool.output',
  'RunToolOutput',
  {
    tool: Type.String(),
    tool_call_id: Id('Id of the tool call.'),
    result_raw: Type.String(),
    is_error: Type.Optional(Type.Boolean()),
    output_ref: Type.Optional(
      Type.Object({
        id: Type.String(),
        byte_size: Type.Optional(Count('Bytes.')),
        line_count: Type.Optional(Count('Lines.')),
      }),
    ),
  },
  'Output of a tool call.',
);
/** Output of a tool call. */
export type RunToolOutput = Static<typeof RunToolOutput>;

/** `llm.request`: one model invocation's input; `seq` may count across a whole session. */
export const RunLlmRequest = runRecord(
  'llm.request',
  'RunLlmRequest',
  {
    seq: Count('Invocation number.'),
    model: Type.Optional(ModelInfo),
    input: Type.Object({
      messages: Type.Array(Message),
      tools: Type.Optional(Nullable(Type.Array(Type.Unknown()))),
      tool_choice: Type.Optional(Type.Unknown()),
      model: Type.Optional(Type.String()),
    }),
  },
  'A model invocation.',
);
/** A model invocation. */
export type RunLlmRequest = Static<typeof RunLlmRequest>;

const tokenCount = Type.Optional(Nullable(Count('Tokens.')));

/** Token usage of one invocation. */
export const Usage = Type.Object(
  {
    model: Type.String(),
    input_tokens: Count('Input tokens.'),
    input_cached_tokens: tokenCount,
    input_cache_creation_tokens: tokenCount,
    input_image_tokens: tokenCount,
    output_tokens: Count('Output tokens.'),
    total_tokens: Count('Total tokens.'),
  },
  { title: 'Usage', description: 'Token usage of one invocation.' },
);
/** Token usage of one invocation. */
export type Usage = Static<typeof Usage>;

/** `llm.response`: one model invocation's output; `seq` matches its `llm.request`. */
export const RunLlmResponse = runRecord(
  'llm.response',
  'RunLlmResponse',
  {
    seq: Count('Invocation number of the matching llm.request.'),
    output: Type.Object({
      messages: Type.Array(Message),
      usage: Type.Optional(Nullable(Usage)),
      stop_reason: Type.Optional(Nullable(Type.String())),
      provider_meta: Type.Optional(Type.Unknown()),
    }),
  },
  'A model response.',
);
/** A model response. */
export type RunLlmResponse = Static<typeof RunLlmResponse>;

/** `run.status`: a status change; unknown statuses are accepted. */
export const RunStatus = runRecord(
  'run.status',
  'RunStatus',
  { status: OpenEnum(RUN_STATUSES, 'Run status.'), message: Type.Optional(Type.String()) },
  'A status change.',
);
/** A status change. */
export type RunStatus = Static<typeof RunStatus>;

/** `run.error`: an error; writers may add structured fields (e.g. provider error details). */
export const RunError = runRecord(
  'run.error',
  'RunError',
  { error: Type.Object({ name: Type.String(), message: Type.String(), stack: Type.Optional(Type.String()) }) },
  'An error during the run.',
);
/** An error during the run. */
export type RunError = Static<typeof RunError>;

/** `run.end`: the last record of a run; nothing follows it. */
export const RunEnd = runRecord(
  'run.end',
  'RunEnd',
  { outcome: OpenEnum(RUN_OUTCOMES, 'How the run ended.'), final: Type.Optional(Type.String()) },
  'The run ended.',
);
/** The run ended. */
export type RunEnd = Static<typeof RunEnd>;

/** Any run-family record defined by v1. */
export type RunRecord =
  | RunHeader
  | RunStart
  | RunContext
  | RunAgentEvent
  | RunToolOutput
  | RunLlmRequest
  | RunLlmResponse
  | RunStatus
  | RunError
  | RunEnd;
