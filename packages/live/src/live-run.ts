import type { FinishOptions, LiveSession } from './session.js';

/**
 * The run a worker streams (seed 003's ConversationModel intents): deltas open and extend assistant segments; any
 * tool record or the end closes the open segment, which the session commits as a message (TJ-LIVE-004).
 */
export class LiveRun {
  /** The run and turn id. */
  readonly requestId: string;
  /**
   * Aborted when the run is cancelled by id ({@link LiveSession.cancel}) or by the server's shutdown (TJ-LIVE-035,
   * TJ-LIVE-036): the worker stops its model; the run is already ended, and its later calls are refused.
   */
  readonly signal: AbortSignal;
  readonly #session: LiveSession;

  /** @internal created by {@link LiveSession.send}. */
  constructor(session: LiveSession, requestId: string, signal: AbortSignal) {
    this.#session = session;
    this.requestId = requestId;
    this.signal = signal;
  }

  /**
   * Streams assistant text. Resolves once the delta is accepted (checked, given its seq, pending in the session); its
   * bytes are held in memory and reach the OS in one write with the next sync — the next boundary, the session's
   * delta delay, or 64 KiB of held deltas — which makes them durable (TJ-LIVE-007). Subscribers receive it once
   * durable. A crash of the process loses the deltas held since the last sync, none that was delivered.
   */
  delta(text: string): Promise<void> {
    return this.#session._delta(this.requestId, text);
  }

  /**
   * Appends an extension record of the run (`x.<org>.<name>`, spec §9.2) with `payload` and the run's `request_id`:
   * data of an integration that the stream records have no place for (the AI SDK's reasoning and data parts). Held
   * and made durable like a delta, in order with the run's other records; it neither opens nor closes a segment.
   * Resolves once accepted.
   */
  extension(type: string, payload: Readonly<Record<string, unknown>>): Promise<void> {
    return this.#session._extension(this.requestId, type, payload);
  }

  /**
   * Inserts a system message into the run's transcript (TJ-LIVE-062): closes the open segment, whose message comes
   * first, and commits `text` as a `message_append` of role `system` with the run's `request_id`; resolves once
   * durable. The next delta opens a new segment.
   */
  system(text: string): Promise<void> {
    return this.#session._system(this.requestId, text);
  }

  /**
   * A tool call began; resolves once durable. Until its `toolEnd`, the session's view lists it as running in the active
   * run's `tools` (TJ-LIVE-063).
   */
  toolStart(input: { readonly toolCallId: string; readonly tool: string; readonly args?: unknown }): Promise<void> {
    return this.#session._boundary(this.requestId, [
      [
        'tool.start',
        {
          request_id: this.requestId,
          tool_call_id: input.toolCallId,
          tool: input.tool,
          ...(input.args === undefined ? {} : { args: input.args }),
        },
      ],
    ]);
  }

  /** A tool call ended; resolves once durable. */
  toolEnd(input: { readonly toolCallId: string; readonly isError?: boolean }): Promise<void> {
    return this.#session._boundary(this.requestId, [
      [
        'tool.end',
        {
          request_id: this.requestId,
          tool_call_id: input.toolCallId,
          ...(input.isError === undefined ? {} : { is_error: input.isError }),
        },
      ],
    ]);
  }

  /** A tool's output: appended as `tool.result` and committed as a `tool` message; resolves once durable. */
  toolResult(input: {
    readonly toolCallId: string;
    readonly output: string;
    readonly isError?: boolean;
  }): Promise<void> {
    const requestId = this.requestId;
    // Built member by member, `is_error` last when given: a spread of an empty object cost an object per record.
    const result: Record<string, unknown> = {
      request_id: requestId,
      tool_call_id: input.toolCallId,
      output: input.output,
    };
    const message: Record<string, unknown> = {
      role: 'tool',
      content: input.output,
      id: `${requestId}.tool.${input.toolCallId}`,
      tool_call_id: input.toolCallId,
      request_id: requestId,
    };
    if (input.isError !== undefined) {
      result.is_error = input.isError;
      message.is_error = input.isError;
    }
    return this.#session._boundary(requestId, [
      ['tool.result', result],
      ['message_append', { message }],
    ]);
  }

  /**
   * The run finished: commits the open segment (and `options.message`), appends `chat.done`, then completes the turn.
   */
  done(options?: FinishOptions): Promise<void> {
    return this.#session._finish(this.requestId, 'done', undefined, undefined, options);
  }

  /** The run failed: commits the open segment as partial, appends `chat.error`, interrupts the turn (`error`). */
  error(
    error: { readonly message: string; readonly name?: string; readonly code?: string },
    options?: FinishOptions,
  ): Promise<void> {
    return this.#session._finish(this.requestId, 'error', error, undefined, options);
  }

  /** The run was cancelled: commits the open segment as partial, appends `chat.cancelled`, interrupts the turn. */
  cancel(reason = 'cancelled', options?: FinishOptions): Promise<void> {
    return this.#session._finish(this.requestId, 'cancelled', undefined, reason, options);
  }
}
