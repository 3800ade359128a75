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
  // What the SDK's reader is given at the end: the chunks with runs of plain deltas of one part merged (the same
  // message, and the reader's cost — a snapshot of the message per chunk — paid per part instead of per token).
  const folding: UIMessageChunk[] = [];
  const write = async (chunk: UIMessageChunk): Promise<void> => {
    await writer.write(chunk);
    mergeInto(folding, chunk);
  };
  let first = true;
  let ended = false;
  const reader = stream.getReader();
  let thrown: { readonly error: unknown } | undefined;
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
  } catch (error) {
    thrown = { error };
  }
  // A write the journal refused leaves the producer mid-stream: it is stopped, not left to run unread. The refusal
  // stays this call's answer; a cancel that fails too is kept on it (`suppressed`), or thrown when it is alone.
  let cancelFailure: { readonly error: unknown } | undefined;
  if (!ended) {
    try {
      await reader.cancel('the journal refused a chunk of the stream');
    } catch (error) {
      cancelFailure = { error };
    }
  }
  reader.releaseLock();
  if (thrown !== undefined) {
    if (cancelFailure !== undefined && thrown.error instanceof Error) {
      const primary = thrown.error as Error & { suppressed?: unknown[] };
      primary.suppressed = [...(primary.suppressed ?? []), cancelFailure.error];
    }
    throw thrown.error;
  }
  if (cancelFailure !== undefined) throw cancelFailure.error;
  const { message, failure } = await foldMessage(folding);
  // No message when the reader could not take even the first chunk: the run's records are then all there is of it.
  const finishing = message === undefined ? {} : { message: { role: UI_MESSAGE_ROLE, [UI_MEMBER]: message } };
  const end = writer.end;
  if (failure !== undefined)
    await run.error({ message: `the UI message stream is not one the AI SDK reads: ${failure}` }, finishing);
  else if (end === undefined || end.kind === 'finish') await run.done(finishing);
  else if (end.kind === 'error') await run.error({ message: end.errorText }, finishing);
  else await run.cancel(end.reason ?? 'aborted', finishing);
}

/** A plain delta: nothing but its type, part id and text (a member more, such as provider metadata, counts). */
function isPlainDelta(chunk: UIMessageChunk): chunk is UIMessageChunk & { type: 'text-delta' | 'reasoning-delta' } {
  return (chunk.type === 'text-delta' || chunk.type === 'reasoning-delta') && Object.keys(chunk).length === 3;
}

/** Appends `chunk` to `chunks`, merged into the last one when both are plain deltas of the same part. */
function mergeInto(chunks: UIMessageChunk[], chunk: UIMessageChunk): void {
  const last = chunks.at(-1);
  if (
    last !== undefined &&
    isPlainDelta(chunk) &&
    isPlainDelta(last) &&
    last.type === chunk.type &&
    last.id === chunk.id &&
    typeof last.delta === 'string' &&
    typeof chunk.delta === 'string'
  ) {
    chunks[chunks.length - 1] = { ...last, delta: last.delta + chunk.delta };
    return;
  }
  chunks.push(chunk);
}

/**
 * The message the SDK's `readUIMessageStream` builds from `chunks` (its last state), and why it stopped when the
 * chunks were not a stream it reads (a delta of a part never started, say): the client would stop at the same place.
 */
async function foldMessage(
  chunks: readonly UIMessageChunk[],
): Promise<{ message: UIMessage | undefined; failure: string | undefined }> {
  let message: UIMessage | undefined;
  let failure: string | undefined;
  // The reader reports each `error` chunk as an Error of its text: those are the stream's word, not a failure.
  const said = chunks.flatMap((chunk) => (chunk.type === 'error' ? [chunk.errorText] : []));
  let next = 0;
  const stream = new ReadableStream<UIMessageChunk>({
    pull(controller) {
      const chunk = chunks[next];
      next += 1;
      if (chunk === undefined) controller.close();
      else controller.enqueue(chunk);
    },
  });
  const messages = readUIMessageStream<UIMessage>({
    stream,
    terminateOnError: false,
    onError: (error) => {
      const text = error instanceof Error ? error.message : String(error);
      const at = said.indexOf(text);
      if (at >= 0) said.splice(at, 1);
      else failure ??= text;
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
