// The shapes a live session's records, views and tokens have on the wire: one source for the server
// (`@turnjournal/live` declares its records and views with them, and its transports send them) and for this client,
// which renders them. Types only: nothing here exists at run time, so neither package gains a runtime dependency.

/** How a run ended, or that it has not (spec §6.3), or `interrupted` for a turn that never got a run. */
export type RunStatus = 'running' | 'done' | 'error' | 'cancelled' | 'interrupted';

/** A tool call of the active run, from its `tool.start` and `tool.end` records (TJ-LIVE-063). */
export interface ToolCall {
  /** The call's id. */
  readonly toolCallId: string;
  /** The tool's name. */
  readonly tool: string;
  /** The call's arguments, when its `tool.start` carried them. */
  readonly args?: unknown;
  /** The `ts` of its `tool.start`. */
  readonly startedAt: string;
  /** The `ts` of its `tool.end`, or null while it runs. */
  readonly endedAt: string | null;
  /** True when its `tool.end` said it failed. */
  readonly isError?: boolean;
}

/** A finished run the client has not acknowledged (seed 001's "missed turn"). */
export interface UndeliveredRun {
  /** The run (and turn) id. */
  readonly requestId: string;
  /** How it ended. */
  readonly status: 'done' | 'error' | 'cancelled';
  /** The seq of its finishing record: acknowledge with `throughSeq` at least this. */
  readonly finishedSeq: number;
  /** The `ts` of its finishing record. */
  readonly finishedAt: string;
}

/**
 * Text of the open assistant segment as the worker produced it, ahead of the records that make it durable
 * (TJ-LIVE-060): it carries no seq and moves no cursor. `text` is the segment's text from character `offset` (UTF-16
 * code units) on; a client holds it as provisional until the segment's `message_append` replaces it or the run's
 * finishing record drops what is left (TJ-LIVE-061).
 */
export interface TokenEvent {
  /** Token text ahead of the durable records. */
  readonly kind: 'token';
  /** The run. */
  readonly requestId: string;
  /** The open segment's `message_id`. */
  readonly messageId: string;
  /** Where `text` starts in the segment's text. */
  readonly offset: number;
  /** The segment's text from `offset` on, as far as the worker produced it. */
  readonly text: string;
}

/** Why a snapshot replaces the client's state: a first connect, records compacted away, a cursor ahead, a new history. */
export type SnapshotMode = 'full' | 'compacted' | 'ahead' | 'reset';
