import {
  type ConversationHub,
  type HubSession,
  LiveError,
  type LiveRun,
  openConversationHub,
  type TokenMode,
} from '@turnjournal/live';
import type { LiveSubscribeResult } from './protocol.js';
import { AdapterRequestError, refusingWhen } from './request-error.js';

/** A session named by a `live_*` request (adapter.md §5.7). */
export interface LiveSessionRef {
  readonly root: string;
  readonly sessionId: string;
}

/** One step of a run (`live_step`). */
export interface LiveStep {
  readonly step: 'delta' | 'tool_start' | 'tool_end' | 'tool_result' | 'done' | 'error' | 'cancel' | 'system';
  readonly text?: string;
  readonly toolCallId?: string;
  readonly tool?: string;
  readonly args?: unknown;
  readonly isError?: boolean;
  readonly output?: string;
  readonly message?: string;
  readonly reason?: string;
}

/** A live snapshot in the shape of an event log's state in a `read` result (adapter.md §4.2). */
export interface LiveSnapshotAnswer {
  last_seq: number | null;
  messages: unknown[];
  active_request_id: string | null;
  overlay: string | null;
  undelivered: string[];
  /** The log's epoch as of `last_seq` (TJ-LIVE-021), null for none. */
  epoch: string | null;
  /** The active run's tool calls, in the order they started (TJ-LIVE-063); empty without an active run. */
  tools: {
    tool_call_id: string;
    tool: string;
    args?: unknown;
    started_ts: string;
    ended_ts: string | null;
    is_error?: boolean;
  }[];
}

/** The bounds a `live_open` asks for on the server of its root (TJ-CONF-073, TJ-CONF-074). */
export interface LiveLimits {
  readonly maxOpenSessions?: number;
  readonly windowBytes?: number;
}

/** Feature `live` (adapter.md §5.7): the implementation's live sessions, one per root and session id. */
export interface LiveOperations {
  /**
   * `live_open`: opens (and recovers) the session, its next runs in token mode `tokens` when given (TJ-LIVE-066; a mode
   * the implementation lacks throws an `AdapterRequestError` with code `unsupported`); resolves with its last durable
   * seq and the bounds it states for client ids (TJ-LIVE-057), for the sessions of `ref.root` open at once
   * (TJ-LIVE-065) and for a session's window of records for live subscribers (TJ-LIVE-030), which `limits` asks for
   * when this is the first request naming the root (TJ-CONF-073, TJ-CONF-074).
   */
  open(
    ref: LiveSessionRef,
    tokens?: string,
    limits?: LiveLimits,
  ): Promise<{ lastSeq: number | null; clientIdMax?: number; maxOpenSessions?: number; windowBytes?: number }>;
  /** `live_send`: submits a turn and starts its run, or answers a retry. */
  send(ref: LiveSessionRef, requestId: string, content: string): Promise<{ created: boolean; status: string }>;
  /** `live_step`: the run's next step; throws a refusal as an `AdapterRequestError` with code `refused`. */
  step(ref: LiveSessionRef, requestId: string, step: LiveStep): Promise<void>;
  /** `live_snapshot`. */
  snapshot(ref: LiveSessionRef, clientId?: string): Promise<LiveSnapshotAnswer>;
  /** `live_ack`. */
  ack(ref: LiveSessionRef, requestId: string, options: { clientId?: string; throughSeq?: number }): Promise<void>;
  /** `live_subscribe`: the events a subscription with cursor `after` yields (see adapter.md §5.7 for when to stop). */
  subscribe(
    ref: LiveSessionRef,
    options: { after: number; epoch?: string | null; untilSeq?: number; timeoutMs: number },
  ): Promise<LiveSubscribeResult['events']>;
  /** Closes every session (at `stop`). */
  close(): Promise<void>;
}

const REFUSED_CODES = new Set([
  'run_active',
  'run_not_active',
  'run_not_finished',
  'ack_before_finish',
  'ack_beyond_log',
  'unknown_run',
  'request_id_conflict',
  'too_many_sessions',
]);

/** The bound @turnjournal/live states for a client id recorded in an acknowledgement (TJ-LIVE-057). */
const CLIENT_ID_MAX = 128;
/** The hub's default bound on the sessions it holds open at once (`maxOpenSessions`, TJ-LIVE-065). */
const MAX_OPEN_SESSIONS = 1000;
/** The hub's default byte bound of a session's window while live subscribers read it (`subscriberLagBytes`). */
const WINDOW_BYTES = 64 * 1024 * 1024;

/** Runs `call`, answering a refusal of @turnjournal/live with `refused` rather than `failed` (TJ-CONF-040). */
const refusing = <T>(call: () => Promise<T>) =>
  refusingWhen((error) => error instanceof LiveError && REFUSED_CODES.has(error.code), call);

/** Feature `live` over @turnjournal/live's hub: one hub per store root, the runs a `live_send` started by request id. */
export function referenceLiveOperations(): LiveOperations {
  const hubs = new Map<string, { hub: ConversationHub; maxOpenSessions: number; windowBytes: number }>();
  const runs = new Map<string, LiveRun>();
  const served = (ref: LiveSessionRef, limits: LiveLimits = {}) => {
    let served = hubs.get(ref.root);
    if (served === undefined) {
      // No background retention and no idle close: the harness decides what happens and when. The bounds on open
      // sessions and on the window are the ones the first request naming the root asks for (TJ-CONF-073, TJ-CONF-074);
      // a window asked below the in-memory window's default bounds that one too (the hub never counts less than it).
      const maxOpenSessions = limits.maxOpenSessions ?? MAX_OPEN_SESSIONS;
      const windowBytes = limits.windowBytes ?? WINDOW_BYTES;
      const hub = openConversationHub({
        root: ref.root,
        retention: false,
        idleCloseMs: 24 * 3_600_000,
        maxOpenSessions,
        subscriberLagBytes: windowBytes,
        ...(limits.windowBytes === undefined ? {} : { ringBytes: Math.min(windowBytes, 4 * 1024 * 1024) }),
      });
      served = { hub, maxOpenSessions, windowBytes };
      hubs.set(ref.root, served);
    }
    return served;
  };
  const hubOf = (ref: LiveSessionRef): ConversationHub => served(ref).hub;
  const session = (ref: LiveSessionRef): Promise<HubSession> => hubOf(ref).session(ref.sessionId);
  const runKey = (ref: LiveSessionRef, requestId: string) => JSON.stringify([ref.root, ref.sessionId, requestId]);
  const runOf = (ref: LiveSessionRef, requestId: string): LiveRun => {
    const run = runs.get(runKey(ref, requestId));
    if (run === undefined) throw new AdapterRequestError('refused', `no run "${requestId}" is active in this adapter`);
    return run;
  };
  return {
    open: (ref, tokens, limits) =>
      // The hub keeps the mode for the session (TJ-LIVE-066), and refuses one it does not know as `invalid_request`
      // (answered `bad_request`); no mode named leaves the one the session has. An open with every session busy is
      // refused `too_many_sessions` (TJ-LIVE-065), answered `refused`.
      refusing(async () => {
        const { hub, maxOpenSessions, windowBytes } = served(ref, limits);
        const opened = await hub.session(ref.sessionId, tokens === undefined ? {} : { tokens: tokens as TokenMode });
        return { lastSeq: opened.snapshot().lastSeq, clientIdMax: CLIENT_ID_MAX, maxOpenSessions, windowBytes };
      }),
    send: (ref, requestId, content) =>
      refusing(async () => {
        const result = await (await session(ref)).send({ requestId, content });
        if (result.created) runs.set(runKey(ref, requestId), result.run);
        return { created: result.created, status: result.status };
      }),
    step: (ref, requestId, step) =>
      refusing(async () => {
        const run = runOf(ref, requestId);
        const need = (value: string | undefined, name: string): string => {
          if (value === undefined) throw new TypeError(`live_step ${step.step} needs ${name}`);
          return value;
        };
        switch (step.step) {
          case 'delta':
            return run.delta(need(step.text, 'text'));
          case 'tool_start':
            return run.toolStart({
              toolCallId: need(step.toolCallId, 'tool_call_id'),
              tool: need(step.tool, 'tool'),
              ...(step.args === undefined ? {} : { args: step.args }),
            });
          case 'tool_end':
            return run.toolEnd({
              toolCallId: need(step.toolCallId, 'tool_call_id'),
              ...(step.isError === undefined ? {} : { isError: step.isError }),
            });
          case 'tool_result':
            return run.toolResult({
              toolCallId: need(step.toolCallId, 'tool_call_id'),
              output: need(step.output, 'output'),
            });
          case 'done':
            return run.done();
          case 'error':
            return run.error({ message: need(step.message, 'message') });
          case 'cancel':
            return run.cancel(step.reason);
          case 'system':
            return run.system(need(step.text, 'text'));
        }
      }),
    async snapshot(ref, clientId) {
      const view = (await session(ref)).snapshot(clientId === undefined ? {} : { clientId });
      return {
        last_seq: view.lastSeq,
        messages: [...view.messages],
        active_request_id: view.activeRun?.requestId ?? null,
        overlay: view.overlay?.text ?? null,
        undelivered: view.undelivered.map((run) => run.requestId),
        epoch: view.epoch,
        tools: (view.activeRun?.tools ?? []).map((call) => ({
          tool_call_id: call.toolCallId,
          tool: call.tool,
          ...(call.args === undefined ? {} : { args: call.args }),
          started_ts: call.startedAt,
          ended_ts: call.endedAt,
          ...(call.isError === undefined ? {} : { is_error: call.isError }),
        })),
      };
    },
    ack: (ref, requestId, options) =>
      refusing(async () => {
        await (await session(ref)).ack(requestId, {
          ...(options.clientId === undefined ? {} : { clientId: options.clientId }),
          ...(options.throughSeq === undefined ? {} : { throughSeq: options.throughSeq }),
        });
      }),
    async subscribe(ref, { after, epoch, untilSeq, timeoutMs }) {
      const live = await session(ref);
      const target = untilSeq ?? live.durableSeq;
      const subscription = live.subscribe({ after, ...(epoch === undefined ? {} : { epoch }) });
      const events: LiveSubscribeResult['events'] = [];
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), timeoutMs);
      });
      try {
        let cursor = after;
        // A cursor ahead of the log yields its `ahead` snapshot at once (TJ-LIVE-010), and a cursor of another epoch
        // its `reset` one (TJ-LIVE-020), even with nothing to wait for.
        const reset = epoch !== undefined && after >= 0 && epoch !== live.snapshot().epoch;
        while (cursor < target || (events.length === 0 && (after > target || reset))) {
          const next = await Promise.race([subscription.next(), timedOut]);
          if (next === 'timeout' || next.done === true) break;
          const event = next.value;
          if (event.kind === 'record') {
            events.push({ seq: event.record.seq });
            cursor = event.record.seq;
          } else if (event.kind === 'snapshot') {
            events.push({ snapshot: event.reason, last_seq: event.view.lastSeq });
            cursor = event.view.lastSeq ?? -1;
          } else {
            events.push({ cut_off: event.cursor });
            break;
          }
        }
        return events;
      } finally {
        clearTimeout(timer);
        subscription.close();
      }
    },
    async close() {
      const all = [...hubs.values()].map((entry) => entry.hub);
      hubs.clear();
      runs.clear();
      const settled = await Promise.allSettled(all.map((hub) => hub.close()));
      const failures = settled.flatMap((result) => (result.status === 'rejected' ? [result.reason] : []));
      if (failures.length > 0) throw new AggregateError(failures, `${failures.length} live store(s) failed to close`);
    },
  };
}
