import type { RecordStore } from '@turnjournal/reader/record-store';
import type { Attachment } from '@turnjournal/schema';
import type { FanOut } from './fanout.js';
import type { ProcessTime } from './live-clock.js';
import type { LiveRun } from './live-run.js';
import type { LiveRunStatus, TokenMode } from './records.js';

/** @internal Settings a hub gives each of its sessions (whose constructor is internal too). */
export interface LiveSessionSettings {
  /** The store of the hub's root: its journals' readers and its notification channel. */
  readonly store: RecordStore;
  /** Stamps, ages and durations (spec §18.6). */
  readonly time: ProcessTime;
  readonly fanOut: FanOut;
  readonly ringRecords: number;
  readonly ringBytes: number;
  /** A live subscriber behind for longer than this is cut off (TJ-LIVE-030). */
  readonly subscriberLagMs: number;
  /** Most bytes the window holds while live subscribers still read what it holds (TJ-LIVE-030). */
  readonly subscriberLagBytes: number;
  readonly deltaFlushMs: number;
  /** What a run's tokens cost (TJ-LIVE-058). */
  readonly tokens: TokenMode;
  readonly deliveryWindowMs: number;
  /**
   * Told once, when the session fails for good (a write or sync of its journals failed, TJ-LIVE-019): the hub counts
   * and reports it, since the failure may come from work no caller awaits (the timed sync of held deltas).
   */
  readonly onFailure?: (sessionId: string, error: unknown) => void;
}

/** A user turn to send (seeds 000 and 003). */
export interface SendInput {
  /** The client-generated id of the turn and its run (TJ-LIVE-001); resend it with every retry. */
  readonly requestId: string;
  /** The user message text. */
  readonly content: string;
  /** Attachment metadata (never the bytes). */
  readonly attachments?: readonly Attachment[];
  /** The model of the run. */
  readonly model?: string | null;
  /**
   * Members added to the user's `message_append` message besides the ones the session writes (`role`, `content`,
   * `id`, `request_id`, `attachments`), durable with it: an integration's own copy of the message (spec §4.6: other
   * members of a Message are free and preserved). A member the session writes itself is refused.
   */
  readonly messageFields?: Readonly<Record<string, unknown>>;
}

/** Options of the calls that end a run ({@link LiveRun.done}, {@link LiveRun.error}, {@link LiveRun.cancel}). */
export interface FinishOptions {
  /**
   * A message of the run committed after its open segment and before its finishing record, durable with it (its
   * `request_id` is the run's): an integration's structured copy of the run's answer, such as the AI SDK's
   * `UIMessage`. It needs a string `role`.
   */
  readonly message?: Readonly<Record<string, unknown>>;
}

/** What a session knows of one run of its log (see {@link LiveSession.runInfo}). */
export interface LiveRunInfo {
  /** The run and turn id. */
  readonly requestId: string;
  /** The run's status. */
  readonly status: LiveRunStatus;
  /** The seq of its `chat.started`. */
  readonly startedSeq: number;
  /** The seq of its finishing record, or null while it runs. */
  readonly finishedSeq: number | null;
  /** True once a `delivery.ack` names it. */
  readonly acked: boolean;
}

/** The answer of {@link LiveSession.send}. */
export type SendResult =
  | {
      /** The turn was new: it is submitted, its run started; stream it through `run`. */
      readonly created: true;
      /** The run and turn id. */
      readonly requestId: string;
      /** Always `running`. */
      readonly status: 'running';
      /** The handle the worker streams the run through. */
      readonly run: LiveRun;
    }
  | {
      /** A retry (TJ-LIVE-002): nothing was written. */
      readonly created: false;
      /** The run and turn id. */
      readonly requestId: string;
      /** The existing run's status. */
      readonly status: LiveRunStatus;
    };

/** Options of {@link LiveSession.subscribe}. */
export interface SubscribeOptions {
  /** The highest seq the client holds (-1, the default, for none): it receives every record after it. */
  readonly after?: number;
  /**
   * The epoch of the log `after` comes from (a view's `epoch`, spec §6.7), or null for a log that had none. When it is
   * not the log's epoch and `after >= 0`, the subscription yields a `reset` snapshot first instead of records after a
   * cursor of another history (TJ-LIVE-020). Leave it out only for a client that never stored one.
   */
  readonly epoch?: string | null;
  /**
   * Also yield the open segment's text as the worker produces it (`LiveTokenEvent`, TJ-LIVE-060), ahead of its
   * records, whenever the subscription has every durable record; off by default. A follower has no tokens to give
   * (its records come from the store) and yields records only.
   */
  readonly tokens?: boolean;
}

/** Options of {@link LiveSession.ack}. */
export interface AckOptions {
  /** Which client acknowledged; it drops out of that client's undelivered list. */
  readonly clientId?: string;
  /** The highest seq the client received: from the run's finishing record to the last durable seq (TJ-LIVE-014). */
  readonly throughSeq?: number;
}
