import type {
  RunStatus,
  SnapshotMode,
  TokenEvent,
  ToolCall,
  UndeliveredRun as WireUndeliveredRun,
} from '@turnjournal/client';
import type { ActiveRun, SegmentOverlay } from '@turnjournal/reader';
import type { Message } from '@turnjournal/schema';

/** One event-log record as subscribers receive it: the envelope of spec §6.1 (unknown members kept from disk). */
export interface LiveRecord {
  /** Position in the log. */
  readonly seq: number;
  /** When it was written (RFC 3339). */
  readonly ts: string;
  /** Record type. */
  readonly type: string;
  /** Type-specific data. */
  readonly payload?: Readonly<Record<string, unknown>>;
  /**
   * The log's epoch (spec §6.7), on the records that carry it in the file: the first record of a new log and every
   * checkpoint. A client takes it as the epoch of its cursor (TJ-LIVE-022).
   */
  readonly epoch?: string;
}

/** How a run ended, or that it has not (spec §6.3), or `interrupted` for a turn that never got a run. */
export type LiveRunStatus = RunStatus;

/** A finished run the client has not acknowledged (seed 001's "missed turn"); its wire shape is the client's. */
export type UndeliveredRun = WireUndeliveredRun;

/** The active run of a live snapshot: spec §15.3's `active_run` plus seed 003's times. */
export interface LiveActiveRun extends ActiveRun {
  /** The `ts` of its `chat.started`. */
  readonly startedAt: string;
  /** The `ts` of its last record. */
  readonly lastActivityAt: string;
  /**
   * The run's tool calls in the order they started (TJ-LIVE-063): a call whose `tool.end` has not come yet is running,
   * so a client that connects while a tool runs shows it.
   */
  readonly tools: readonly LiveToolCall[];
}

/** A tool call of the active run, from its `tool.start` and `tool.end` records; its wire shape is the client's. */
export type LiveToolCall = ToolCall;

/**
 * Seed 003's ConversationView (spec §18.4): what a client renders on (re)connect. Consistent with `lastSeq`
 * (TJ-LIVE-013): subscribe with `after: lastSeq` to continue without a gap or a repeat.
 */
export interface ConversationView {
  /** The session. */
  readonly sessionId: string;
  /** The committed transcript (spec §15.1). */
  readonly messages: readonly Message[];
  /** The active run, or null. */
  readonly activeRun: LiveActiveRun | null;
  /** The buffered text of the open assistant segment, or null. */
  readonly overlay: SegmentOverlay | null;
  /** The highest durable seq, or null for an empty log. */
  readonly lastSeq: number | null;
  /**
   * The epoch of the log through `lastSeq` (spec §6.7, TJ-LIVE-021), null when it has none: store it with the cursor
   * and send both to `subscribe`, which answers a cursor of another history with a `reset` snapshot (TJ-LIVE-020).
   */
  readonly epoch: string | null;
  /** Finished runs this client has not acknowledged and whose delivery has not expired (TJ-LIVE-015). */
  readonly undelivered: readonly UndeliveredRun[];
}

/** What a subscription yields (spec §18.3). */
export type LiveEvent =
  | {
      /** A record with the next seq. */
      readonly kind: 'record';
      /** The record. */
      readonly record: LiveRecord;
    }
  | {
      /**
       * The records the client lacks are gone (`compacted`), its cursor is unknown (`ahead`), or its cursor belongs to
       * another history of the session (`reset`: the epoch it sent is not the log's): render this view.
       */
      readonly kind: 'snapshot';
      /** Why a snapshot came instead of records (TJ-LIVE-010, TJ-LIVE-020). */
      readonly reason: Exclude<SnapshotMode, 'full'>;
      /** The view; the subscription continues after its `lastSeq`. */
      readonly view: ConversationView;
    }
  | {
      /** The subscriber fell behind the in-memory window (TJ-LIVE-011); the iteration ends after this event. */
      readonly kind: 'cut_off';
      /** The last seq it received: subscribe again with `after: cursor`. */
      readonly cursor: number;
    };

/**
 * What a run's tokens cost (spec §18.2, TJ-LIVE-058): `durable` writes each token as a `chat.delta` record, held and
 * made durable with the next sync (TJ-LIVE-007); `segments` writes no record per token, only the segment's text at
 * its boundaries — a paragraph end, {@link SEGMENT_CHUNK_CHARS} characters, a tool or system record, the run's end
 * (TJ-LIVE-059). In both, subscribers that ask for tokens receive each one as soon as the worker produced it
 * (TJ-LIVE-060).
 */
export type TokenMode = 'durable' | 'segments';

/**
 * In `segments` mode, the most characters of a segment's text held unwritten: once its unwritten text reaches this,
 * it is written as one `chat.delta` (TJ-LIVE-059), so that a crash loses at most this much of it besides a paragraph.
 */
export const SEGMENT_CHUNK_CHARS = 4096;

/**
 * Text of the open assistant segment as the worker produced it, ahead of the records that make it durable
 * (TJ-LIVE-060, TJ-LIVE-061); its wire shape is the client's.
 */
export type LiveTokenEvent = TokenEvent;
