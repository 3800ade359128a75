import type { LiveRun } from '@turnjournal/live';
import type { UIMessageChunk } from 'ai';
import { type AnyChunk, CHUNK_RECORD, type ChunkRecord, type JoinedRecord, without } from './records.js';

/** How a run's stream ended, as its chunks said. */
export type StreamEnd =
  | { readonly kind: 'finish' }
  | { readonly kind: 'error'; readonly errorText: string }
  | { readonly kind: 'abort'; readonly reason?: string };

/**
 * Writes the chunks of one UI message stream into a live run, in order: text deltas as `chat.delta`, tool calls and
 * results as tool records, everything else (and what those records have no member for) as {@link CHUNK_RECORD}
 * extension records. Deltas and extension records are held and made durable with the next sync; tool records are
 * durable when their chunk's write resolves (TJ-LIVE-006, TJ-LIVE-007).
 */
export class ChunkWriter {
  readonly #run: LiveRun;
  /** The id of the text part the last `text-start` opened: a delta of that part needs no record of its own. */
  #textId: string | undefined;
  #end: StreamEnd | undefined;

  constructor(run: LiveRun) {
    this.#run = run;
  }

  /** How the stream ended, once a `finish`, `error` or `abort` chunk was written (the last one counts). */
  get end(): StreamEnd | undefined {
    return this.#end;
  }

  /** Writes one chunk; resolves once its records are accepted (tool records: once durable). */
  async write(chunk: UIMessageChunk): Promise<void> {
    const any = chunk as AnyChunk;
    switch (chunk.type) {
      case 'text-start':
        this.#textId = chunk.id;
        return this.#extension({ chunk: any });
      case 'text-delta':
        // The common delta — of the part the last text-start opened, nothing but its text — is the `chat.delta` alone.
        if (chunk.id !== this.#textId || Object.keys(chunk).length !== 3 || typeof chunk.delta !== 'string')
          await this.#extension({ chunk: without(any, 'delta'), join: 'chat.delta' });
        return this.#run.delta(String(chunk.delta));
      case 'tool-input-available':
        await this.#joined(any, 'input', 'tool.start');
        return this.#run.toolStart({
          toolCallId: chunk.toolCallId,
          tool: chunk.toolName,
          ...(chunk.input === undefined ? {} : { args: chunk.input }),
        });
      case 'tool-output-available': {
        // A preliminary output is one of several of the same call; an undefined one has no JSON text: both stay whole.
        if (chunk.preliminary === true || chunk.output === undefined) return this.#extension({ chunk: any });
        await this.#joined(any, 'output', 'tool.result');
        await this.#run.toolResult({ toolCallId: chunk.toolCallId, output: JSON.stringify(chunk.output) });
        return this.#run.toolEnd({ toolCallId: chunk.toolCallId });
      }
      case 'tool-output-error':
        await this.#joined(any, 'errorText', 'tool.result');
        await this.#run.toolResult({ toolCallId: chunk.toolCallId, output: chunk.errorText, isError: true });
        return this.#run.toolEnd({ toolCallId: chunk.toolCallId, isError: true });
      case 'finish':
        this.#end = { kind: 'finish' };
        return this.#extension({ chunk: any });
      case 'error':
        this.#end = { kind: 'error', errorText: chunk.errorText };
        return this.#extension({ chunk: any });
      case 'abort':
        this.#end = { kind: 'abort', ...(chunk.reason === undefined ? {} : { reason: chunk.reason }) };
        return this.#extension({ chunk: any });
      default:
        return this.#extension({ chunk: any });
    }
  }

  #joined(chunk: AnyChunk, member: string, join: JoinedRecord): Promise<void> {
    return this.#extension({ chunk: without(chunk, member), join });
  }

  #extension(payload: ChunkRecord): Promise<void> {
    return this.#run.extension(CHUNK_RECORD, payload as unknown as Record<string, unknown>);
  }
}
