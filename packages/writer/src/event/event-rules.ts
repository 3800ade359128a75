import type { IncrementalEventFold } from '@turnjournal/reader/_internals';
import { EVENT_STREAM_TYPES } from '@turnjournal/schema';

/**
 * The transition rules of an event log writer, as a pure function of the fold of the log (the reader's, continued with
 * every record the writer reserved) and one valid record: why the record may not be appended now, or null when it
 * applies. What a reader would report about the record (an out-of-range edit as `inapplicable_event`, TJ-REPLAY-002; a
 * second active run, TJ-EVENT-009; a reused `request_id`, TJ-EVENT-010; an ack before its run finished, TJ-EVENT-012;
 * an ack through a record not yet written, TJ-EVENT-021; stream records outside the active run), the writer refuses
 * with `illegal_transition`. `everyRun` holds the request ids of every run of the log, those before the tail the fold
 * started from included (TJ-EVENT-010 holds across reopen and compaction, TJ-EVENT-017).
 */
export function whyNotApplicable(
  fold: IncrementalEventFold,
  type: string,
  payload: Readonly<Record<string, unknown>> | undefined,
  everyRun: ReadonlyMap<string, { readonly finish: string | null }> = new Map(),
): string | null {
  const body = payload ?? {};
  if (type === 'message_edit' && 'index' in body && 'message' in body) {
    const index = body.index as number;
    return index >= fold.messages.length
      ? `index ${index} is out of range for a list of ${fold.messages.length} message(s)`
      : null;
  }
  if (type === 'undo') {
    const n = (body.n as number | undefined) ?? 1;
    return n > fold.messages.length ? `cannot remove ${n} message(s) from a list of ${fold.messages.length}` : null;
  }
  const requestId = body.request_id as string;
  if (type === 'delivery.ack') {
    if (fold.isRunFinished(requestId) === false)
      return `run "${requestId}" has not finished; acknowledge it after its finishing record (TJ-EVENT-012)`;
    // The client can only have received records written before this one (TJ-EVENT-021): a through_seq at or past the
    // ack's own seq is a client's bug or a hostile client, never a receipt.
    const through = body.through_seq;
    const last = fold.lastSeq ?? -1;
    return typeof through === 'number' && through > last
      ? `through_seq ${through} is beyond the last record written before this ack (seq ${last}); a client cannot have received it (TJ-EVENT-021)`
      : null;
  }
  if (!EVENT_STREAM_TYPES.has(type)) return null;
  const active = fold.activeRequestId;
  if (type === 'chat.started') {
    if (active !== undefined)
      return `run "${active}" is still active; append its chat.done, chat.error or chat.cancelled first (TJ-EVENT-009)`;
    return fold.isRunFinished(requestId) !== undefined || everyRun.has(requestId)
      ? `run "${requestId}" already started in this log (TJ-EVENT-010)`
      : null;
  }
  const finished = fold.isRunFinished(requestId);
  if (type === 'chat.cancelled' && finished === false) return null;
  // A run abandoned before the tail the writer folded (known from the run index only) may still be cancelled.
  if (type === 'chat.cancelled' && finished === undefined && everyRun.get(requestId)?.finish === null) return null;
  if (active === undefined) return `there is no active run (request_id "${requestId}")`;
  if (requestId !== active) return `run "${requestId}" is not the active run "${active}"`;
  if (type === 'chat.delta') {
    const segment = fold.openSegment;
    if (segment === undefined || segment.requestId !== requestId || segment.messageId !== body.message_id)
      return `message_id "${String(body.message_id)}" is not the open segment${segment === undefined ? ' (none is open)' : ` "${segment.messageId}"`}; append assistant.segment.started first`;
  }
  return null;
}
