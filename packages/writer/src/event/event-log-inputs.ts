import type { JournalCursor } from '@turnjournal/reader/record-store';
import type { Message } from '@turnjournal/schema';
import type { Durability } from '../append/append-file.js';
import type { FileSystem } from '../fs/file-system.js';
import type { AcquireLockOptions } from '../fs/lock.js';

/** The recommended file name of an event log inside its session directory (spec §4.4). */
export { EVENT_LOG_FILE_NAME } from '@turnjournal/reader/store-format';

/** Reason of the `chat.cancelled` records that startup recovery appends (TJ-RECOV-011). */
export const SERVER_STARTUP_RECOVERY = 'server_startup_recovery';

/** Options every way of naming an event log shares. */
export interface EventLogCommonOptions {
  /**
   * Durability mode (TJ-DUR-013, declared as {@link EventLog.durability}); `every` by default. `group` shares one
   * fdatasync among overlapping appends. `none` acknowledges once the bytes reach the OS: TJ-DUR-016 says a writer
   * SHOULD NOT use it for message records and delivery acks, which every event log holds, so choose it only for a
   * log whose loss on power failure is acceptable.
   */
  readonly durability?: Durability;
  /**
   * Records between two automatic checkpoints (TJ-EVENT-006): once this many records have been appended since the last
   * checkpoint (or the start of the file; records of every type count) and their bytes have reached the length of that
   * checkpoint's line, a `checkpoint` is appended. `DEFAULT_CHECKPOINT_INTERVAL` of `@turnjournal/schema` (50) by
   * default.
   */
  readonly checkpointInterval?: number;
  /** The file-system layer; the real one by default. */
  readonly fs?: FileSystem;
  /** Wall clock in epoch milliseconds, for `ts` and compaction's retention; `Date.now` by default. */
  readonly clock?: () => number;
  /** Line-size limit in bytes without the LF; 16 MiB by default. */
  readonly maxLineBytes?: number;
  /** Options of the lock acquisition. */
  readonly lock?: AcquireLockOptions;
  /**
   * Chooses the epoch of a log that has none (spec §6.7): a new log's, written on its first record (TJ-EVENT-023), or
   * an older log's, written on its next checkpoint. Every call must return a new id; `crypto.randomUUID` (122 random
   * bits) by default. For hosts with their own id scheme, and tests that compare two writers' bytes.
   */
  readonly newEpoch?: () => string;
}

/**
 * Options of {@link openEventLog}: the file itself (`file`), or a store root and a session id, which give
 * `<root>/<sessionId>/events.jsonl` (spec §4.4; the session id must be a valid identifier, TJ-FAM-010). Missing
 * directories are created durably (TJ-DUR-008).
 */
export type OpenEventLogOptions = EventLogCommonOptions &
  (
    | {
        /** The event log file. */
        readonly file: string;
        /** Not with `file`. */
        readonly root?: undefined;
        /** Not with `file`. */
        readonly sessionId?: undefined;
      }
    | {
        /** Not with `root`. */
        readonly file?: undefined;
        /** The store root. */
        readonly root: string;
        /** The session, a valid identifier (spec §4.3). */
        readonly sessionId: string;
      }
  );

/** Where an acknowledged event record was written. */
export interface EventLogAck {
  /** The seq the record carries (TJ-EVENT-003). */
  readonly seq: number;
  /** Where its line starts: an opaque cursor of the log (see `JournalCursor`). */
  readonly cursor: JournalCursor;
  /** Length of its line, LF included. */
  readonly length: number;
}

/** Where opening found the state the writer continues from (spec §15.2). */
export interface EventLogOpenRecovery {
  /** Byte offset of the last valid checkpoint, or null when the log has none (it was then folded from its start). */
  readonly checkpointOffset: number | null;
  /** Where the forward read began: the checkpoint, an earlier `chat.started` of a possibly active run, or 0. */
  readonly startOffset: number;
}

/** A `chat.started` to append (spec §6.3). */
export interface EventChatStartedInput {
  /** The client-generated id of the run; unique in the session (TJ-EVENT-010). */
  readonly requestId: string;
  /** The model of the run. */
  readonly model?: string | null;
  /** The user message text. */
  readonly content?: string;
}

/** An `assistant.segment.started` to append. */
export interface EventSegmentStartedInput {
  /** The active run. */
  readonly requestId: string;
  /** The id of the assistant message the segment becomes. */
  readonly messageId: string;
}

/** A `chat.delta` to append. */
export interface EventChatDeltaInput {
  /** The active run. */
  readonly requestId: string;
  /** The open segment's message id. */
  readonly messageId: string;
  /** The streamed text. */
  readonly text: string;
}

/** A `tool.start` to append. */
export interface EventToolStartInput {
  /** The active run. */
  readonly requestId: string;
  /** The id of the tool call. */
  readonly toolCallId: string;
  /** The tool's name. */
  readonly tool: string;
  /** The call's arguments, any JSON value. */
  readonly args?: unknown;
}

/** A `tool.end` to append. */
export interface EventToolEndInput {
  /** The active run. */
  readonly requestId: string;
  /** The id of the tool call. */
  readonly toolCallId: string;
  /** True when the call failed. */
  readonly isError?: boolean;
}

/** A `tool.result` to append. */
export interface EventToolResultInput {
  /** The active run. */
  readonly requestId: string;
  /** The id of the tool call. */
  readonly toolCallId: string;
  /** The tool's output. */
  readonly output: string;
  /** True when the output is an error. */
  readonly isError?: boolean;
}

/** A `chat.error` to append. */
export interface EventChatErrorInput {
  /** The active run. */
  readonly requestId: string;
  /** What failed. */
  readonly error: { readonly message: string; readonly name?: string; readonly code?: string };
}

/** A `chat.cancelled` to append. */
export interface EventChatCancelledInput {
  /** The run. */
  readonly requestId: string;
  /** Why, an open string (e.g. `user`, `server_startup_recovery`). */
  readonly reason?: string;
}

/** Optional members of a `delivery.ack` (spec §6.4). */
export interface EventDeliveryAckOptions {
  /** Which client acknowledged. */
  readonly clientId?: string;
  /** The highest seq the client has received. */
  readonly throughSeq?: number;
}

/**
 * A message to append: the v1 Message (a string `role`, any `content`) with any further members (`id`,
 * `tool_call_id`, …), which are stored and preserved as they are (spec §4.6).
 */
export type EventLogMessage = Message & { readonly [member: string]: unknown };
