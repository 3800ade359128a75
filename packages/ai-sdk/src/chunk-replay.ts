import type { LiveRecord } from '@turnjournal/live';
import type { UIMessageChunk } from 'ai';
import { CHUNK_RECORD, type ChunkRecord } from './records.js';

/** The error text of the chunk that ends a run that a server restart interrupted (TJ-LIVE-016). */
export const INTERRUPTED_BY_RESTART =
  'The answer was interrupted by a server restart; the text streamed before it is kept.';

/** A tool output the integration wrote as JSON text; text that is not JSON (a log edited by hand) stays text. */
function parseOutput(output: string): unknown {
  try {
    return JSON.parse(output) as unknown;
  } catch (error) {
    if (error instanceof SyntaxError) return output;
    throw error;
  }
}

const TERMINAL_CHUNKS = new Set(['finish', 'error', 'abort']);

/**
 * Turns the records of one run, in seq order, back into the UI message chunks that were written (the inverse of
 * {@link ChunkWriter}). A run that ended without its own last chunk — a `chat.done`, `chat.error` or `chat.cancelled`
 * that a chunk did not announce, such as the cancellation of restart recovery — ends with the SDK's `finish`, `error`
 * or `abort` chunk. Records of a run that another program wrote (no extension records) read as text and dynamic tool
 * chunks.
 */
export class ChunkReplay {
  readonly #requestId: string;
  #textId: string | undefined;
  /** True while the text part was opened here for a foreign segment (no `text-start` chunk in the log). */
  #segmentText = false;
  #pending: ChunkRecord | undefined;
  #terminal = false;
  #ended = false;

  constructor(requestId: string) {
    this.#requestId = requestId;
  }

  /** True once the run's finishing record was read. */
  get ended(): boolean {
    return this.#ended;
  }

  /** The chunks record `record` stands for (none for a record of another run or one that carries no chunk). */
  read(record: LiveRecord): UIMessageChunk[] {
    const payload = record.payload ?? {};
    if (this.#ended || payload.request_id !== this.#requestId) return [];
    switch (record.type) {
      case CHUNK_RECORD:
        return this.#chunkRecord(payload as unknown as ChunkRecord);
      case 'assistant.segment.started':
        return this.#segment(String(payload.message_id));
      case 'chat.delta':
        return this.#delta(String(payload.text));
      case 'tool.start':
        return [this.#toolStart(payload)];
      case 'tool.result':
        return [this.#toolResult(payload)];
      case 'chat.done':
        return this.#finish({ type: 'finish' });
      case 'chat.error': {
        const error = payload.error as { message?: unknown } | undefined;
        return this.#finish({ type: 'error', errorText: String(error?.message ?? 'error') });
      }
      case 'chat.cancelled':
        return this.#finish(
          payload.reason === 'server_startup_recovery'
            ? { type: 'error', errorText: INTERRUPTED_BY_RESTART }
            : { type: 'abort', ...(typeof payload.reason === 'string' ? { reason: payload.reason } : {}) },
        );
      default:
        return [];
    }
  }

  #chunkRecord(record: ChunkRecord): UIMessageChunk[] {
    if (record.join !== undefined) {
      this.#pending = record;
      return [];
    }
    const chunk = record.chunk as unknown as UIMessageChunk;
    if (chunk.type === 'text-start') {
      this.#textId = chunk.id;
      this.#segmentText = false;
    }
    if (TERMINAL_CHUNKS.has(chunk.type)) this.#terminal = true;
    return [chunk];
  }

  #take(join: ChunkRecord['join']): Record<string, unknown> | undefined {
    const pending = this.#pending;
    if (pending === undefined || pending.join !== join) return undefined;
    this.#pending = undefined;
    return { ...pending.chunk };
  }

  #segment(messageId: string): UIMessageChunk[] {
    // Only a foreign run's segments are text parts of their own: the integration's parts come with text-start.
    if (!this.#segmentText) return [];
    const previous = this.#textId as string;
    this.#textId = messageId;
    return [
      { type: 'text-end', id: previous },
      { type: 'text-start', id: messageId },
    ];
  }

  #delta(text: string): UIMessageChunk[] {
    const joined = this.#take('chat.delta');
    if (joined !== undefined) return [{ ...joined, delta: text } as UIMessageChunk];
    if (this.#textId !== undefined) return [{ type: 'text-delta', id: this.#textId, delta: text }];
    // A delta with no text part open: a run another program wrote; its text is one part per segment.
    this.#textId = `${this.#requestId}.text`;
    this.#segmentText = true;
    return [
      { type: 'text-start', id: this.#textId },
      { type: 'text-delta', id: this.#textId, delta: text },
    ];
  }

  #toolStart(payload: Readonly<Record<string, unknown>>): UIMessageChunk {
    const joined = this.#take('tool.start');
    const input = 'args' in payload ? { input: payload.args } : {};
    if (joined !== undefined) return { ...joined, ...input } as UIMessageChunk;
    return {
      type: 'tool-input-available',
      toolCallId: String(payload.tool_call_id),
      toolName: String(payload.tool),
      input: payload.args,
      dynamic: true,
    };
  }

  #toolResult(payload: Readonly<Record<string, unknown>>): UIMessageChunk {
    const joined = this.#take('tool.result');
    const output = String(payload.output);
    if (joined !== undefined)
      return (
        joined.type === 'tool-output-error'
          ? { ...joined, errorText: output }
          : { ...joined, output: parseOutput(output) }
      ) as UIMessageChunk;
    const toolCallId = String(payload.tool_call_id);
    return payload.is_error === true
      ? { type: 'tool-output-error', toolCallId, errorText: output, dynamic: true }
      : { type: 'tool-output-available', toolCallId, output, dynamic: true };
  }

  #finish(last: UIMessageChunk): UIMessageChunk[] {
    this.#ended = true;
    if (this.#terminal) return [];
    const close: UIMessageChunk[] =
      this.#segmentText && this.#textId !== undefined ? [{ type: 'text-end', id: this.#textId }] : [];
    return [...close, last];
  }
}
