import Type, { type Static, type TProperties } from 'typebox';
import { Count, Id, Message, Nullable, Timestamp } from './common.js';

/** Default number of events between two checkpoints of an event log. */
export const DEFAULT_CHECKPOINT_INTERVAL = 50;

const envelope = {
  // At most 2^53 - 1: a larger number has no exact double, so the fold could not order it (TJ-EVENT-018).
  seq: Type.Integer({
    minimum: 0,
    maximum: Number.MAX_SAFE_INTEGER,
    description: 'Position in the log: strictly increasing within a file; at most 2^53 - 1.',
  }),
  ts: Timestamp('When the event was written.'),
  version: Type.Optional(Type.Literal(1, { description: 'Major version; absent means 1.' })),
};

/** The envelope every event-log record shares: `{seq, ts, type, payload}`. */
export const EventEnvelope = Type.Object(
  {
    ...envelope,
    type: Type.String({ minLength: 1 }),
    payload: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { title: 'EventEnvelope', description: 'Fields every event-log record has, whatever its type.' },
);
/** Fields every event-log record has. */
export type EventEnvelope = Static<typeof EventEnvelope>;

function eventRecord<const T extends string, P extends TProperties>(type: T, payload: P, description: string) {
  return Type.Object(
    { ...envelope, type: Type.Literal(type), payload: Type.Object(payload) },
    { title: titleOf(type), description },
  );
}

function titleOf(type: string): string {
  const words = type.split(/[._]/).map((w) => w.charAt(0).toUpperCase() + w.slice(1));
  return `Event${words.join('')}`;
}

const requestId = Id('Client-generated correlation id of the run (seed 003 `requestId`).');
const toolCallId = Id('Id of the tool call.');
const messageId = Id('Id of the assistant segment message.');

/** `message_append`: a message was added to the conversation. */
export const EventMessageAppend = eventRecord('message_append', { message: Message }, 'A message was appended.');
/** A message was appended. */
export type EventMessageAppend = Static<typeof EventMessageAppend>;

/** `message_edit`: one message replaced (`{index, message}`) or the whole list replaced (`{messages}`). */
export const EventMessageEdit = Type.Object(
  {
    ...envelope,
    type: Type.Literal('message_edit'),
    payload: Type.Union([
      Type.Object({ index: Count('Index of the message to replace.'), message: Message }),
      Type.Object({ messages: Type.Array(Message) }),
    ]),
  },
  { title: 'EventMessageEdit', description: 'One message or the whole list was replaced.' },
);
/** One message or the whole list was replaced. */
export type EventMessageEdit = Static<typeof EventMessageEdit>;

/** `undo`: the last `n` messages (default 1) were removed. */
export const EventUndo = Type.Object(
  {
    ...envelope,
    type: Type.Literal('undo'),
    payload: Type.Optional(
      Type.Object({
        n: Type.Optional(Type.Integer({ minimum: 1, description: 'How many messages to pop; default 1.' })),
      }),
    ),
  },
  { title: 'EventUndo', description: 'The last n messages were removed.' },
);
/** The last n messages were removed. */
export type EventUndo = Static<typeof EventUndo>;

/** `checkpoint`: full snapshot of the message list; recovery starts from the latest one. */
export const EventCheckpoint = eventRecord(
  'checkpoint',
  { messages: Type.Array(Message) },
  'Full snapshot of the message list.',
);
/** Full snapshot of the message list. */
export type EventCheckpoint = Static<typeof EventCheckpoint>;

/**
 * `checkpoint.part`: one of the `parts` records, with consecutive seqs, that together hold a checkpoint too long for
 * one line (spec §6.2, TJ-EVENT-028); their `messages` in `part` order are the list. The last part carries what a
 * `checkpoint` carries besides its messages (the run index).
 */
export const EventCheckpointPart = eventRecord(
  'checkpoint.part',
  {
    part: Type.Integer({ minimum: 0, description: 'Position of this part in its checkpoint, from 0.' }),
    parts: Type.Integer({ minimum: 2, description: 'How many parts the checkpoint has.' }),
    messages: Type.Array(Message),
  },
  'One part of a checkpoint split over several lines.',
);
/** One part of a checkpoint split over several lines. */
export type EventCheckpointPart = Static<typeof EventCheckpointPart>;

/** `chat.started`: a run was accepted. */
export const EventChatStarted = eventRecord(
  'chat.started',
  { request_id: requestId, model: Type.Optional(Nullable(Type.String())), content: Type.Optional(Type.String()) },
  'A run was accepted.',
);
/** A run was accepted. */
export type EventChatStarted = Static<typeof EventChatStarted>;

/** `assistant.segment.started`: the first assistant token arrived with no open segment. */
export const EventAssistantSegmentStarted = eventRecord(
  'assistant.segment.started',
  { request_id: requestId, message_id: messageId },
  'An assistant segment opened.',
);
/** An assistant segment opened. */
export type EventAssistantSegmentStarted = Static<typeof EventAssistantSegmentStarted>;

/** `chat.delta`: assistant text streamed into the open segment. */
export const EventChatDelta = eventRecord(
  'chat.delta',
  { request_id: requestId, message_id: messageId, text: Type.String() },
  'Assistant text for the open segment.',
);
/** Assistant text for the open segment. */
export type EventChatDelta = Static<typeof EventChatDelta>;

/** `tool.start`: a tool call began (closes any open assistant segment). */
export const EventToolStart = eventRecord(
  'tool.start',
  { request_id: requestId, tool_call_id: toolCallId, tool: Type.String(), args: Type.Optional(Type.Unknown()) },
  'A tool call began.',
);
/** A tool call began. */
export type EventToolStart = Static<typeof EventToolStart>;

/** `tool.end`: a tool call finished. */
export const EventToolEnd = eventRecord(
  'tool.end',
  { request_id: requestId, tool_call_id: toolCallId, is_error: Type.Optional(Type.Boolean()) },
  'A tool call finished.',
);
/** A tool call finished. */
export type EventToolEnd = Static<typeof EventToolEnd>;

/**
 * `tool.result`: output of a tool call (seed 003 calls it `tool.output`; renamed so type names stay unique
 * across families, since `tool.output` is a run record).
 */
export const EventToolResult = eventRecord(
  'tool.result',
  { request_id: requestId, tool_call_id: toolCallId, output: Type.String(), is_error: Type.Optional(Type.Boolean()) },
  'Output of a tool call.',
);
/** Output of a tool call. */
export type EventToolResult = Static<typeof EventToolResult>;

/** `chat.done`: the run finished normally. */
export const EventChatDone = eventRecord('chat.done', { request_id: requestId }, 'The run finished.');
/** The run finished. */
export type EventChatDone = Static<typeof EventChatDone>;

/** `chat.error`: the run failed. */
export const EventChatError = eventRecord(
  'chat.error',
  {
    request_id: requestId,
    error: Type.Object({
      message: Type.String(),
      name: Type.Optional(Type.String()),
      code: Type.Optional(Type.String()),
    }),
  },
  'The run failed.',
);
/** The run failed. */
export type EventChatError = Static<typeof EventChatError>;

/** `chat.cancelled`: the run was cancelled. */
export const EventChatCancelled = eventRecord(
  'chat.cancelled',
  { request_id: requestId, reason: Type.Optional(Type.String()) },
  'The run was cancelled.',
);
/** The run was cancelled. */
export type EventChatCancelled = Static<typeof EventChatCancelled>;

/** `delivery.ack`: a client confirms it received a finished run (seed 001). */
export const EventDeliveryAck = eventRecord(
  'delivery.ack',
  {
    request_id: requestId,
    client_id: Type.Optional(Id('Which client acknowledged.')),
    through_seq: Type.Optional(
      Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Last seq the client received.' }),
    ),
  },
  'A client received a finished run.',
);
/** A client received a finished run. */
export type EventDeliveryAck = Static<typeof EventDeliveryAck>;

/** Any event-log record defined by v1. */
export type EventRecord =
  | EventMessageAppend
  | EventMessageEdit
  | EventUndo
  | EventCheckpoint
  | EventCheckpointPart
  | EventChatStarted
  | EventAssistantSegmentStarted
  | EventChatDelta
  | EventToolStart
  | EventToolEnd
  | EventToolResult
  | EventChatDone
  | EventChatError
  | EventChatCancelled
  | EventDeliveryAck;

/** Event types that carry a run's `request_id` in their payload: the stream records of spec §6.3. */
export const EVENT_STREAM_TYPES: ReadonlySet<string> = new Set([
  'chat.started',
  'assistant.segment.started',
  'chat.delta',
  'tool.start',
  'tool.end',
  'tool.result',
  'chat.done',
  'chat.error',
  'chat.cancelled',
]);

/** The records that finish a run, and the status each gives it (spec §6.3; the first one decides). */
export const EVENT_FINISHING_TYPES: ReadonlyMap<string, 'done' | 'error' | 'cancelled'> = new Map([
  ['chat.done', 'done'],
  ['chat.error', 'error'],
  ['chat.cancelled', 'cancelled'],
]);

/** Records whose arrival closes the open assistant segment (spec §15.3); a `checkpoint` does not. */
export const SEGMENT_CLOSING_TYPES: ReadonlySet<string> = new Set([
  'message_append',
  'message_edit',
  'undo',
  'tool.start',
  'assistant.segment.started',
]);
