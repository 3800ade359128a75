import type { LiveRun } from '@turnjournal/live';
import { readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import { ChunkWriter } from './chunk-writer.js';
import { UI_MEMBER, UI_MESSAGE_ROLE } from './records.js';

/** Options of {@link persistUIMessageStream}. */
export interface PersistOptions {
  /**
   * The assistant message's id when the stream's `start` chunk names none (the SDK's client would make up one of
   * its own, and the chat reloaded would hold another): given to the `start` chunk, which is added when missing.
   */
  readonly messageId: string;
}

/**
 * Writes the UI message stream `stream` into the live run `run` as it is produced (see {@link ChunkWriter}), folds it
 * into its `UIMessage` with the SDK's own reader, and ends the run by the stream's last word: `finish` (or a stream
 * that just ends) completes it, `error` fails it, `abort` cancels it (reason `aborted`, or the chunk's) — each with
 * the final `UIMessage` committed as a message of the run, so the chat reloads exactly as the client built it. A
 * stream that throws ends with an `error` chunk of the error's message. Resolves once the run's end is durable;
 * rejects when the session refuses a write (the run is then left to restart recovery).
 */
export async function persistUIMessageStream(
  run: LiveRun,
  stream: ReadableStream<UIMessageChunk>,
  options: PersistOptions,
): Promise<void> {
  const writer = new ChunkWriter(run);
  let feed: ReadableStreamDefaultController<UIMessageChunk> | undefined;
  const expectedErrors = { count: 0 };
  const folded = foldMessage(
    new ReadableStream<UIMessageChunk>({
      start(controller) {
        feed = controller;
      },
    }),
    expectedErrors,
  );
  const write = async (chunk: UIMessageChunk): Promise<void> => {
    // Journal first: the SDK's reader may change the objects it is given (it merges data and metadata into them).
    await writer.write(chunk);
    if (chunk.type === 'error') expectedErrors.count += 1;
    feed?.enqueue(chunk);
  };
  let first = true;
  let ended = false;
  const reader = stream.getReader();
  try {
    for (;;) {
      let next: Awaited<ReturnType<typeof reader.read>>;
      try {
        next = await reader.read();
      } catch (error) {
        // The producer failed (a model call that threw): the client sees the SDK's error chunk, like a stream of
        // streamText that failed; the run fails with it.
        ended = true;
        if (first) await write({ type: 'start', messageId: options.messageId });
        first = false;
        await write({ type: 'error', errorText: error instanceof Error ? error.message : String(error) });
        break;
      }
      if (next.done) {
        ended = true;
        break;
      }
      let chunk = next.value;
      if (first) {
        first = false;
        if (chunk.type !== 'start') await write({ type: 'start', messageId: options.messageId });
        else if (chunk.messageId === undefined) chunk = { ...chunk, messageId: options.messageId };
      }
      await write(chunk);
    }
    if (first) await write({ type: 'start', messageId: options.messageId });
  } finally {
    // A write the journal refused leaves the producer mid-stream: it is stopped, not left to run unread. The refusal
    // in flight is this call's answer; a producer whose cancel fails too adds nothing a caller could act on.
    if (!ended) await reader.cancel('the journal refused a chunk of the stream').catch(() => undefined);
    reader.releaseLock();
    feed?.close();
  }
  const { message, failure } = await folded;
  const finishing = { message: { role: UI_MESSAGE_ROLE, [UI_MEMBER]: message } };
  const end = writer.end;
  if (failure !== undefined)
    await run.error({ message: `the UI message stream is not one the AI SDK reads: ${failure}` }, finishing);
  else if (end === undefined || end.kind === 'finish') await run.done(finishing);
  else if (end.kind === 'error') await run.error({ message: end.errorText }, finishing);
  else await run.cancel(end.reason ?? 'aborted', finishing);
}

/**
 * The message the SDK's `readUIMessageStream` builds from `stream` (its last state), and why it stopped when the
 * chunks were not a stream it reads (a delta of a part never started, say): the client would stop at the same place.
 * `expectedErrors` counts the `error` chunks fed so far that the reader has yet to report.
 */
async function foldMessage(
  stream: ReadableStream<UIMessageChunk>,
  expectedErrors: { count: number },
): Promise<{ message: UIMessage | undefined; failure: string | undefined }> {
  let message: UIMessage | undefined;
  let failure: string | undefined;
  const messages = readUIMessageStream<UIMessage>({
    stream,
    terminateOnError: false,
    // The reader reports each `error` chunk here too, in order: those are the stream's word, not a failure.
    onError: (error) => {
      if (expectedErrors.count > 0) expectedErrors.count -= 1;
      else failure ??= error instanceof Error ? error.message : String(error);
    },
  });
  try {
    for await (const state of messages) message = state;
  } catch (error) {
    if (!(error instanceof Error)) throw error;
    failure ??= error.message;
  }
  return { message, failure };
}
