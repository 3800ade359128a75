// The frames of the WebSocket transport as the client sees them (packages/live/README.md, "WebSocket transport"). The
// shapes the server declares too (tool calls, missed runs, tokens, snapshot modes) come from wire.ts, their one source.
import type { SnapshotMode, TokenEvent, ToolCall, UndeliveredRun } from './wire.js';

export type { SnapshotMode } from './wire.js';

/** A durable record of the session's log, as the transport sends it (a checkpoint comes without its payload). */
export interface RecordFrame {
  /** Its position in the log: consecutive, from 0. */
  readonly seq: number;
  /** When it was written (RFC 3339). */
  readonly ts: string;
  /** The record type (`chat.started`, `chat.delta`, `message_append`, `chat.done`, …). */
  readonly type: string;
  /** The run it belongs to, or null. */
  readonly requestId: string | null;
  /** The record's payload (absent on a checkpoint). */
  readonly payload?: Record<string, unknown>;
  /** The log's epoch, on the records that carry it. */
  readonly epoch?: string;
}

/** The server's view of the conversation (the live package's `ConversationView`). */
export interface ViewFrame {
  /** The session. */
  readonly sessionId: string;
  /** The committed transcript. */
  readonly messages: readonly Record<string, unknown>[];
  /** The active run, or null; `tools` lists its tool calls, `endedAt` null while one runs (TJ-LIVE-063). */
  readonly activeRun: {
    readonly requestId: string;
    readonly tools?: readonly ToolCall[];
  } | null;
  /** The streamed text of the open assistant segment, or null. */
  readonly overlay: Record<string, unknown> | null;
  /** The seq the view is consistent with, or null for an empty log. */
  readonly lastSeq: number | null;
  /** The epoch of the log through `lastSeq`, or null. */
  readonly epoch: string | null;
  /** Finished runs this client has not acknowledged. */
  readonly undelivered: readonly UndeliveredRun[];
}

/** What a {@link LiveClient} hands the app, in order. */
export type ClientEvent =
  | {
      /** The next record: its seq is one more than the last delivered, never repeated. */
      readonly kind: 'record';
      readonly record: RecordFrame;
    }
  | {
      /** Replace everything with this view; records after `view.lastSeq` follow. */
      readonly kind: 'snapshot';
      readonly mode: SnapshotMode;
      readonly view: ViewFrame;
      /** The outcome of every turn of the view, by request id. */
      readonly runs: Readonly<Record<string, string>>;
    }
  /** Text of the open segment as the worker produced it, ahead of its records; it moves no cursor. */
  | TokenEvent
  | {
      /** The connection's state changed. */
      readonly kind: 'state';
      readonly state: ConnectionState;
    }
  | {
      /** The server refused a frame that has no promise to reject (a cancel, an ack). */
      readonly kind: 'error';
      readonly op: string;
      readonly code: string;
      readonly message: string;
      readonly requestId: string | undefined;
    };

/**
 * `connecting` (the first connection), `replaying` (subscribed, catching up), `live` (caught up: sends go out),
 * `reconnecting` (waiting to connect again, or connecting), `closed` (by {@link LiveClient.close}).
 */
export type ConnectionState = 'connecting' | 'replaying' | 'live' | 'reconnecting' | 'closed';
