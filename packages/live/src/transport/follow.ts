// A client's subscription as a transport streams it: the opening (the whole view, or the records after its cursor),
// then every record and snapshot, forwarded only as fast as the connection takes them (TJ-LIVE-040).

import type { HubSession } from '../hub.js';
import type { ConversationView, LiveEvent, LiveRecord, LiveTokenEvent } from '../records.js';
import type { Subscription } from '../subscription.js';

/** Where a subscription's frames go: a WebSocket, or an SSE response. */
export interface SubscriberSink {
  /** True once the connection closed or was cut off: the loop stops. */
  readonly closed: boolean;
  /**
   * Sends a subscription frame (`seq`: the seq it brings the client's cursor to; undefined for a token, which moves
   * no cursor, TJ-LIVE-050) once the connection can take it; resolves false when it was cut off or closed instead.
   */
  forward(frame: Record<string, unknown>, seq: number | undefined): Promise<boolean>;
  /**
   * Sends a control frame at once (it never waits for the connection); `seq` is given for a frame that brings the
   * client's cursor to it (the opening's full snapshot), which the SSE transport sends as the event's id.
   */
  reply(frame: Record<string, unknown>, seq?: number): void;
  /** The subscription now served, so that a close of the connection closes it and a cut-off names its cursor. */
  following(subscription: Subscription<LiveEvent | LiveTokenEvent>): void;
}

/** What a client asked to start from. */
export interface Opening {
  readonly clientId: string;
  /** The last seq it holds, or null for the whole view. */
  readonly lastSeq: number | null;
  /** The epoch of its cursor's history, when it knows it. */
  readonly epoch: string | null | undefined;
}

/**
 * Opens the client's subscription and streams it to `sink` until the connection closes or the session ends:
 * a `snapshot` frame first (the view, or `resume` with the head), the records, `live` once the replay reached the head
 * seen at the opening. Resolves when the stream ended; the caller decides what a session that ended means.
 */
export async function followSession(session: HubSession, opening: Opening, sink: SubscriberSink): Promise<void> {
  const { clientId, lastSeq, epoch } = opening;
  // Everything up to subscribe() is synchronous: the view, the head and the cursor describe one state.
  const head = session.durableSeq;
  let after: number;
  if (lastSeq === null) {
    const view = session.snapshot({ clientId });
    after = view.lastSeq ?? -1;
    sink.reply({ type: 'snapshot', mode: 'full', payload: view, runs: runStatuses(session, view) }, after);
  } else {
    sink.reply({ type: 'snapshot', mode: 'resume', after: lastSeq, head });
    after = lastSeq;
  }
  // Tokens go out as the worker produces them (TJ-LIVE-060); a follower's subscription yields records only.
  let subscription: Subscription<LiveEvent | LiveTokenEvent> = session.subscribe({
    after,
    tokens: true,
    ...(lastSeq === null || epoch === undefined ? {} : { epoch }),
  });
  sink.following(subscription);
  // The loop below pulls the next record only once the sink took the last one, so a slow client holds at most what
  // the sink's bound allows; a subscription the session cut off for lagging resumes from its cursor.
  let caughtUp = subscription.cursor >= head;
  if (caughtUp) sink.reply({ type: 'live', head });
  while (!sink.closed) {
    let resumeAfter: number | null = null;
    for await (const event of subscription) {
      if (sink.closed) break;
      if (event.kind === 'token') {
        const { requestId, messageId, offset, text } = event;
        const frame = { type: 'token', requestId, messageId, offset, text };
        if (!(await sink.forward(frame, undefined))) return;
      } else if (event.kind === 'record') {
        if (!(await sink.forward(recordFrame(event.record), event.record.seq))) return;
        if (!caughtUp && event.record.seq >= head) {
          caughtUp = true;
          sink.reply({ type: 'live', head: event.record.seq });
        }
      } else if (event.kind === 'snapshot') {
        const own = session.snapshot({ clientId });
        const view = own.lastSeq === event.view.lastSeq ? own : event.view;
        const frame = { type: 'snapshot', mode: event.reason, payload: view, runs: runStatuses(session, view) };
        if (!(await sink.forward(frame, view.lastSeq ?? -1))) return;
        if (!caughtUp) {
          caughtUp = true;
          sink.reply({ type: 'live', head: view.lastSeq ?? -1 });
        }
      } else resumeAfter = event.cursor;
    }
    if (resumeAfter === null || sink.closed || session.ended) return;
    subscription = session.subscribe({ after: resumeAfter, tokens: true });
    sink.following(subscription);
  }
}

/** The frame of one record: a checkpoint goes without its payload (the whole transcript), its seq and epoch kept. */
export function recordFrame(record: LiveRecord): Record<string, unknown> {
  const requestId = (record.payload as { request_id?: unknown } | undefined)?.request_id;
  if (record.type === 'checkpoint') {
    const { payload: _transcript, ...rest } = record as unknown as Record<string, unknown>;
    return { ...rest, requestId: null };
  }
  return { ...record, requestId: typeof requestId === 'string' ? requestId : null };
}

/** The outcome of every turn of the view (the view lists the active run and the missed ones, not the others). */
function runStatuses(session: HubSession, view: ConversationView): Record<string, string> {
  const statuses: Record<string, string> = {};
  for (const message of view.messages) {
    const requestId = (message as { request_id?: unknown }).request_id;
    if (message.role !== 'user' || typeof requestId !== 'string') continue;
    statuses[requestId] = session.statusOf(requestId) ?? 'interrupted';
  }
  return statuses;
}
