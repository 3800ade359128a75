import type { Durability } from '@turnjournal/writer';
import type { ReadResult, ReplayResult, StartResult } from './protocol.js';
import type { LiveOperations } from './reference-live.js';

// What an adapter implements, op by op (adapter.md): `runAdapter` serves the protocol over it, the reference
// implementation fills it with @turnjournal/reader and @turnjournal/writer, and the kit's broken adapters swap parts of it.

/** One open journal file on the adapter side. */
export interface AdapterWriter {
  /** Appends one record; resolves once it is durable in the file's mode (TJ-CONF-014). */
  append(record: Record<string, unknown>): Promise<void>;
  /** Flushes, closes and releases the lock. */
  close(): Promise<void>;
}

/** The parts of an adapter a test can swap, to build a deliberately broken adapter on the reference one. */
export interface AdapterImplementation {
  /** Capabilities answered to `start`. */
  readonly capabilities: StartResult;
  /** `read`; with `representatives`, the result holds each turn's representative records (feature `representatives`). */
  read(
    paths: readonly string[],
    mode: 'tolerant' | 'prefix' | 'strict',
    audit: boolean,
    maxLineBytes?: number,
    representatives?: boolean,
  ): Promise<ReadResult>;
  /** `replay`; `epoch` absent when the request has none (a client that predates epochs). */
  replay(file: string, after: number, epoch?: string | null): Promise<ReplayResult>;
  /** `open`: throws `JournalLockedError` (of @turnjournal/writer) when another writer holds the file. */
  open(file: string, durability: Durability): Promise<AdapterWriter>;
  /**
   * `lines` (feature `store-lines`): the exact bytes of each committed line of the journal `file` names, without its
   * LF, in order; none for a journal the store does not hold.
   */
  readonly lines?: (file: string) => Promise<readonly Uint8Array[]>;
  /** The operations of feature `lifecycle` (adapter.md §5.4); absent when the feature is not claimed. */
  readonly lifecycle?: LifecycleOperations;
  /**
   * Feature `recovery` (adapter.md §5.5): applies startup recovery to the store at `root` with no host transcript, and
   * resolves with the turns it closed as interrupted.
   */
  readonly recover?: (root: string) => Promise<{ sessionId: string; turnId: string }[]>;
  /** Feature `retention` (adapter.md §5.6): the sweep and the compaction; absent when the feature is not claimed. */
  readonly retention?: RetentionOperations;
  /** Feature `live` (adapter.md §5.7): makes the live sessions one adapter process serves. */
  readonly live?: () => LiveOperations;
}

/** Feature `lifecycle`: each call opens the session's writer, makes one call, and closes it (adapter.md §5.4). */
export interface LifecycleOperations {
  /** `turn_submit`: resolves with whether a record was written; throws a refusal as `AdapterRequestError('refused')`. */
  turnSubmit(request: {
    root: string;
    sessionId: string;
    turnId: string;
    content: string;
  }): Promise<{ created: boolean }>;
  /** `turn_event`: writes the turn's next step, or throws a refusal. */
  turnEvent(request: {
    root: string;
    sessionId: string;
    turnId: string;
    event: 'worker_started' | 'assistant_started' | 'completed' | 'interrupted';
    reason?: string;
  }): Promise<void>;
  /** `event_append`: appends through the event-log writer and resolves with the seq it gave the record. */
  eventAppend(request: { file: string; type: string; payload: Record<string, unknown> }): Promise<{ seq: number }>;
  /** `run_step`: writes one record through the run writer; resolves with the seq it gave an agent event or request. */
  runStep(request: RunStep): Promise<{ seq?: number }>;
  /** `state_write`: replaces the session's state document `<root>/sessions/state/<sessionId>.json`. */
  stateWrite(request: { root: string; sessionId: string; messages: Record<string, unknown>[] }): Promise<void>;
}

/** One `run_step` request (adapter.md §5.4): the run file, its run id and header time, and the step to write. */
export interface RunStep {
  readonly file: string;
  readonly runId: string;
  /** The header's `started_at`, used when the file is new. */
  readonly startedAt: string;
  readonly step: 'start' | 'agent_event' | 'llm_request' | 'llm_response' | 'end';
  /** `start` and `llm_request`. */
  readonly input?: unknown;
  /** `agent_event`. */
  readonly event?: Record<string, unknown>;
  /** `llm_response`: the seq of the request it answers. */
  readonly seq?: number;
  /** `llm_response`. */
  readonly output?: unknown;
  /** `end`. */
  readonly outcome?: string;
}

/** Feature `retention` (adapter.md §5.6): the retention sweep and the event-log compaction, at a given time. */
export interface RetentionOperations {
  /** `sweep`: sweeps `<root>/_turn_journal` at `now` (epoch ms); resolves with the turns pruned per session. */
  sweep(request: {
    root: string;
    now: number;
    /** Absent: the sweep's default window (TJ-RET-001). */
    windowSeconds?: number;
  }): Promise<{ sessionId: string; pruned: string[] }[]>;
  /** `compact`: compacts the event log `file` at `now`; resolves with the lines removed and the expired runs. */
  compact(request: {
    file: string;
    now: number;
    /** Absent: the compaction's default retention window. */
    windowSeconds?: number;
    /** Absent: the default delivery window (TJ-LIVE-015). */
    deliveryWindowSeconds?: number;
  }): Promise<{ removedRecords: number; expired: string[] }>;
}
