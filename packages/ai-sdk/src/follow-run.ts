import type { HubSession, Subscription } from '@turnjournal/live';
import type { UIMessageChunk } from 'ai';
import { ChunkReplay } from './chunk-replay.js';

/** The error text of a replay whose records compaction removed (the run's answer is in the chat's messages). */
export const RUN_COMPACTED = 'The records of this answer were compacted away; reload the chat to see it.';

/** Options of {@link followRun}. */
export interface FollowRunOptions {
  /** Called once the consumer of the stream took the run's last chunk, with the seq of its finishing record. */
  readonly onDelivered?: (finishedSeq: number) => void;
}

/**
 * The UI message chunks of run `requestId` of `session`, from its first record (`startedSeq`) to its end: the records
 * already durable first, then live ones as they become durable (spec §18.3), so a consumer that joins late or
 * reconnects gets the whole answer, once, in order. Pulled: a slow consumer holds back only its own subscription, and
 * one that falls out of the session's window of recent records subscribes again from its cursor. Cancelling the
 * stream ends the subscription and nothing else: the run goes on.
 */
export function followRun(
  session: HubSession,
  requestId: string,
  startedSeq: number,
  options: FollowRunOptions = {},
): ReadableStream<UIMessageChunk> {
  const replay = new ChunkReplay(requestId);
  let subscription: Subscription | undefined;
  let cursor = startedSeq - 1;
  let finishedSeq: number | undefined;
  return new ReadableStream<UIMessageChunk>({
    async pull(controller) {
      // The pull after the last chunk: the consumer took it (a pull comes only once the queue has room).
      if (finishedSeq !== undefined) {
        controller.close();
        options.onDelivered?.(finishedSeq);
        return;
      }
      for (;;) {
        subscription ??= session.subscribe({ after: cursor });
        const next = await subscription.next();
        if (next.done === true) {
          // The session closed (or failed) under the stream: the consumer's own reconnect resumes it.
          controller.error(new Error(`session "${session.sessionId}" closed while run "${requestId}" was followed`));
          return;
        }
        const event = next.value;
        if (event.kind === 'cut_off') {
          subscription.close();
          subscription = undefined;
          cursor = event.cursor;
          continue;
        }
        if (event.kind === 'snapshot') {
          controller.enqueue({ type: 'error', errorText: RUN_COMPACTED });
          subscription.close();
          controller.close();
          return;
        }
        cursor = event.record.seq;
        const chunks = replay.read(event.record);
        for (const chunk of chunks) controller.enqueue(chunk);
        if (replay.ended) {
          subscription.close();
          // With no chunk of its own, the finishing record ends the stream now: a pull that enqueues nothing is not
          // called again for the read that waits.
          if (chunks.length === 0) {
            controller.close();
            options.onDelivered?.(event.record.seq);
          } else finishedSeq = event.record.seq;
          return;
        }
        if (chunks.length > 0) return;
      }
    },
    cancel() {
      subscription?.close();
    },
  });
}
