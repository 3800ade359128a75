import Type, { type Static, type TSchema } from 'typebox';
import { Timestamp } from './common.js';
import {
  EventAssistantSegmentStarted,
  EventChatCancelled,
  EventChatDelta,
  EventChatDone,
  EventChatError,
  EventChatStarted,
  EventCheckpoint,
  EventCheckpointPart,
  EventDeliveryAck,
  EventEnvelope,
  EventMessageAppend,
  EventMessageEdit,
  EventToolEnd,
  EventToolResult,
  EventToolStart,
  EventUndo,
} from './event.js';
import {
  RunAgentEvent,
  RunContext,
  RunEnd,
  RunError,
  RunHeader,
  RunLlmRequest,
  RunLlmResponse,
  RunStart,
  RunStatus,
  RunToolOutput,
} from './run.js';
import { SessionState } from './state.js';
import {
  TurnAssistantStarted,
  TurnCompacted,
  TurnCompleted,
  TurnInterrupted,
  TurnSubmitted,
  TurnWorkerStarted,
} from './turn.js';

/** The four record families of v1. */
export const RECORD_FAMILIES = ['turn', 'event', 'run', 'state'] as const;
/** One of the four record families. */
export type RecordFamily = (typeof RECORD_FAMILIES)[number];

/** A record type defined by v1: its family, its discriminator value and its schema. */
export interface RecordDefinition {
  /** Family the type belongs to. */
  readonly family: RecordFamily;
  /** Value of the discriminator (`event` for turn records, `type` otherwise; `SessionState` for state). */
  readonly type: string;
  /** Name of the schema, used as its key in the JSON Schema `$defs`. */
  readonly name: string;
  /** The TypeBox schema. */
  readonly schema: TSchema;
}

function define(family: RecordFamily, type: string, schema: TSchema & { title?: string }): RecordDefinition {
  if (schema.title === undefined) throw new Error(`schema for ${family}/${type} has no title`);
  return { family, type, name: schema.title, schema };
}

/** Every record type v1 defines, grouped by family, in spec order. */
export const RECORD_DEFINITIONS: readonly RecordDefinition[] = [
  define('turn', 'submitted', TurnSubmitted),
  define('turn', 'worker_started', TurnWorkerStarted),
  define('turn', 'assistant_started', TurnAssistantStarted),
  define('turn', 'completed', TurnCompleted),
  define('turn', 'interrupted', TurnInterrupted),
  define('turn', 'compacted', TurnCompacted),
  define('event', 'message_append', EventMessageAppend),
  define('event', 'message_edit', EventMessageEdit),
  define('event', 'undo', EventUndo),
  define('event', 'checkpoint', EventCheckpoint),
  define('event', 'checkpoint.part', EventCheckpointPart),
  define('event', 'chat.started', EventChatStarted),
  define('event', 'assistant.segment.started', EventAssistantSegmentStarted),
  define('event', 'chat.delta', EventChatDelta),
  define('event', 'tool.start', EventToolStart),
  define('event', 'tool.end', EventToolEnd),
  define('event', 'tool.result', EventToolResult),
  define('event', 'chat.done', EventChatDone),
  define('event', 'chat.error', EventChatError),
  define('event', 'chat.cancelled', EventChatCancelled),
  define('event', 'delivery.ack', EventDeliveryAck),
  define('run', 'header', RunHeader),
  define('run', 'run.start', RunStart),
  define('run', 'run.context', RunContext),
  define('run', 'agent.event', RunAgentEvent),
  define('run', 'tool.output', RunToolOutput),
  define('run', 'llm.request', RunLlmRequest),
  define('run', 'llm.response', RunLlmResponse),
  define('run', 'run.status', RunStatus),
  define('run', 'run.error', RunError),
  define('run', 'run.end', RunEnd),
  define('state', 'SessionState', SessionState),
];

/** What every turn-family record has, whatever its event name: the version and the discriminator. */
export const TurnEnvelope = Type.Object(
  {
    version: Type.Literal(1, { description: 'Major version of the turn record format.' }),
    event: Type.String({ minLength: 1 }),
    created_at: Type.Number({ description: 'When the event was written: epoch seconds.' }),
  },
  { title: 'TurnEnvelope', description: 'Fields every turn-family record has (TJ-TURN-001).' },
);
/** Fields every turn-family record has. */
export type TurnEnvelope = Static<typeof TurnEnvelope>;

/** What every non-header run record has, whatever its type. */
export const RunEnvelope = Type.Object(
  {
    type: Type.String({ minLength: 1 }),
    run_id: Type.String({ minLength: 1 }),
    ts: Timestamp('When the record was written.'),
  },
  { title: 'RunEnvelope', description: 'Fields every run record other than the header has.' },
);
/** Fields every run record other than the header has. */
export type RunEnvelope = Static<typeof RunEnvelope>;

/** The envelope a record of an unknown or extension type must still satisfy, per family. */
export const FAMILY_ENVELOPES: Readonly<
  Record<Exclude<RecordFamily, 'state'>, { readonly name: string; readonly schema: TSchema }>
> = {
  turn: { name: 'TurnEnvelope', schema: TurnEnvelope },
  event: { name: 'EventEnvelope', schema: EventEnvelope },
  run: { name: 'RunEnvelope', schema: RunEnvelope },
};

// One map per family: a lookup per record must not build a composite key string.
const byFamilyAndType = new Map<RecordFamily, Map<string, RecordDefinition>>(
  RECORD_FAMILIES.map((family) => [
    family,
    new Map(RECORD_DEFINITIONS.filter((d) => d.family === family).map((d) => [d.type, d])),
  ]),
);
const byType = new Map(
  RECORD_DEFINITIONS.filter((d) => d.family === 'run' || d.family === 'event').map((d) => [d.type, d]),
);

/** The definition of a family's record type, or `undefined` when v1 does not define it. */
export function findRecordDefinition(family: RecordFamily, type: string): RecordDefinition | undefined {
  return byFamilyAndType.get(family)?.get(type);
}

/** The run or event definition whose `type` is this name (names are unique across those families). */
export function findTypedDefinition(type: string): RecordDefinition | undefined {
  return byType.get(type);
}
