import type { LiveRecord } from './records.js';

/**
 * The two ids every `chat.delta` of one segment carries, kept once per segment: the pending list and the window keep
 * a delta as its seq, `ts`, text and these, not as a record object (see `PendingRecords`), and build the
 * {@link LiveRecord} only when something reads it.
 */
export class DeltaIds {
  /** The run's `request_id`. */
  readonly requestId: string;
  /** The segment's `message_id`. */
  readonly messageId: string;

  constructor(requestId: string, messageId: string) {
    this.requestId = requestId;
    this.messageId = messageId;
  }

  /** The record of the delta `text` of this segment with `seq` and `ts`: what the log holds (spec §6.1). */
  record(seq: number, ts: string, text: string): LiveRecord {
    return {
      seq,
      ts,
      type: 'chat.delta',
      payload: { request_id: this.requestId, message_id: this.messageId, text },
    };
  }

  /** The window's size of the delta `text`: about its JSON, as the pipeline estimates a flat payload's. */
  size(text: string): number {
    return this.requestId.length + this.messageId.length + text.length + 40 + 64;
  }
}
