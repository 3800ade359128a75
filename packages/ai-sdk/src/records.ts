// Where a UI message stream lives in a live session's records. Text deltas are `chat.delta`, tool calls and results the
// tool records, so that any turnjournal reader sees the transcript; what those records have no member for travels in
// the one extension record type below (spec §9.2), and the run's final UIMessage in a message of its own role.
import type { UIMessage, UIMessageChunk } from 'ai';

/** The extension record type holding a UI message chunk, or the part of one that a stream record completes. */
export const CHUNK_RECORD = 'x.turnjournal.ui_chunk';

/** The role of the message that holds a run's final `UIMessage` (member {@link UI_MEMBER}), committed with its end. */
export const UI_MESSAGE_ROLE = 'ui_message';

/** The member of a user message and of a {@link UI_MESSAGE_ROLE} message that holds the `UIMessage` itself. */
export const UI_MEMBER = 'ui';

/** The stream record whose content completes the chunk an extension record holds (see {@link ChunkRecord}). */
export type JoinedRecord = 'chat.delta' | 'tool.start' | 'tool.result';

/**
 * The payload of a {@link CHUNK_RECORD}: a chunk, whole, or without the member that the next stream record of the run
 * carries (`join` names that record): the delta of a text delta, a tool call's input, a tool's output or error text.
 */
export interface ChunkRecord {
  readonly chunk: Readonly<Record<string, unknown>>;
  readonly join?: JoinedRecord;
}

/** A UI message chunk as a plain object (the chunk union narrowed by `type` where the code needs its members). */
export type AnyChunk = UIMessageChunk & Record<string, unknown>;

/** The text of a UI message's text parts, for the turn's `content` that readers without the AI SDK show. */
export function textOf(message: UIMessage): string {
  let text = '';
  for (const part of message.parts) if (part.type === 'text') text += part.text;
  return text;
}

/** `object` without the member `key` (a shallow copy). */
export function without(object: Readonly<Record<string, unknown>>, key: string): Record<string, unknown> {
  const { [key]: _dropped, ...rest } = object;
  return rest;
}
