import type { EventLogSnapshot, EventLogState, EventRunStatus } from '@turnjournal/reader';
import { EVENT_FINISHING_TYPES, EVENT_STREAM_TYPES, type Message, SEGMENT_CLOSING_TYPES } from '@turnjournal/schema';

/** What the writer knows of one run (spec §6.3). */
export interface KnownRun {
  /** The `seq` of its `chat.started`. */
  readonly startedSeq: number;
  /** The highest `seq` among its stream records. */
  lastSeq: number;
  /** How its first finishing record ended it, or undefined while it has none. */
  finish: Exclude<EventRunStatus, 'running' | 'abandoned'> | undefined;
  /** True once a `delivery.ack` names it. */
  delivered: boolean;
}

/**
 * Freezes a parsed JSON value in depth, so that a snapshot handed out cannot change the writer's message list. Walks
 * with an explicit stack, not recursion: a valid message may nest as deep as its line allows (thousands of levels),
 * and a recursive walk would end in a bare `RangeError` there.
 */
export function deepFreeze<T>(value: T): T {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const next = stack.pop();
    if (typeof next !== 'object' || next === null || Object.isFrozen(next)) continue;
    Object.freeze(next);
    for (const member of Object.values(next)) stack.push(member);
  }
  return value;
}

/**
 * The writer's own fold of its event log (spec §15.1, §15.3), applied to each record as its append is called, so that
 * the next append can be checked against it and {@link EventLog.snapshot} costs no read. It is seeded from the
 * reader's {@link EventLogFold} of the file's tail when the log is opened, and it applies exactly the rules of that
 * fold to the records the writer itself produces (which are always valid, in seq order, and never inapplicable), so
 * the two agree; the property tests compare them after random operation sequences.
 *
 * Only the runs the opening recovery read (those started after the last checkpoint, and the last `chat.started`) and
 * the runs started since are known: older `request_id`s are outside the tail the recovery reads (TJ-REPLAY-005).
 */
export class EventState {
  /** The message list; its elements are frozen. */
  messages: Message[];
  /** The highest seq written or reserved, or null for an empty log. */
  lastSeq: number | null;
  /** Accepted records since the last checkpoint (or the start of the file): what triggers the next checkpoint. */
  sinceCheckpoint: number;
  /** Known runs by `request_id`, in start order. */
  readonly runs: Map<string, KnownRun>;
  /** The `request_id` of the last `chat.started`, when its run has not finished. */
  activeRequestId: string | undefined;
  /** The open segment of the active run, with its buffered text. */
  segment: { requestId: string; messageId: string; text: string } | undefined;

  constructor(
    messages: Message[],
    lastSeq: number | null,
    sinceCheckpoint: number,
    runs: Map<string, KnownRun>,
    activeRequestId: string | undefined,
    segment: { requestId: string; messageId: string; text: string } | undefined,
  ) {
    this.messages = messages;
    this.lastSeq = lastSeq;
    this.sinceCheckpoint = sinceCheckpoint;
    this.runs = runs;
    this.activeRequestId = activeRequestId;
    this.segment = segment;
  }

  /** The state a reader's fold of the file (or of its tail) derived, and the records counted since its checkpoint. */
  static fromFold(state: EventLogState, sinceCheckpoint: number): EventState {
    const runs = new Map<string, KnownRun>();
    for (const run of state.runs) {
      const finish = run.status === 'running' || run.status === 'abandoned' ? undefined : run.status;
      runs.set(run.requestId, { startedSeq: run.startedSeq, lastSeq: run.lastSeq, finish, delivered: run.delivered });
    }
    const overlay = state.overlay;
    return new EventState(
      state.messages.map((message) => deepFreeze(message)),
      state.lastSeq,
      sinceCheckpoint,
      runs,
      state.activeRun?.requestId,
      overlay === null ? undefined : { requestId: overlay.requestId, messageId: overlay.messageId, text: overlay.text },
    );
  }

  /** The run that is active (the last started, not finished), if any. */
  get activeRun(): KnownRun | undefined {
    return this.activeRequestId === undefined ? undefined : this.runs.get(this.activeRequestId);
  }

  /** Runs known to have started and never finished, the active one included (spec §15.3). */
  unfinishedRuns(): string[] {
    const ids: string[] = [];
    for (const [requestId, run] of this.runs) if (run.finish === undefined) ids.push(requestId);
    return ids;
  }

  /**
   * Applies one record the writer appends, with the reader's rules (spec §15.1, §15.3). The caller has checked that it
   * applies (edit index in range, undo within the list, stream records for a known run).
   */
  apply(type: string, payload: Record<string, unknown> | undefined, seq: number): void {
    this.lastSeq = seq;
    this.sinceCheckpoint = type === 'checkpoint' ? 0 : this.sinceCheckpoint + 1;
    if (SEGMENT_CLOSING_TYPES.has(type)) this.segment = undefined;
    const body = payload ?? {};
    switch (type) {
      case 'message_append':
        this.messages.push(deepFreeze(body.message as Message));
        return;
      case 'message_edit':
        if ('index' in body && 'message' in body)
          this.messages[body.index as number] = deepFreeze(body.message as Message);
        else this.messages = [...deepFreeze(body.messages as Message[])];
        return;
      case 'undo': {
        const n = (body.n as number | undefined) ?? 1;
        this.messages.length = Math.max(0, this.messages.length - n);
        return;
      }
      case 'checkpoint':
        this.messages = [...deepFreeze(body.messages as Message[])];
        return;
      case 'delivery.ack': {
        const run = this.runs.get(body.request_id as string);
        if (run !== undefined) run.delivered = true;
        return;
      }
      default:
        if (EVENT_STREAM_TYPES.has(type)) this.#stream(type, body, seq);
    }
  }

  #stream(type: string, payload: Record<string, unknown>, seq: number): void {
    const requestId = payload.request_id as string;
    if (type === 'chat.started') {
      this.segment = undefined;
      if (!this.runs.has(requestId))
        this.runs.set(requestId, { startedSeq: seq, lastSeq: seq, finish: undefined, delivered: false });
      const run = this.runs.get(requestId);
      this.activeRequestId = run?.finish === undefined ? requestId : undefined;
      return;
    }
    if (type === 'assistant.segment.started') {
      this.segment = { requestId, messageId: payload.message_id as string, text: '' };
    } else if (type === 'chat.delta' && this.segment !== undefined && payload.message_id === this.segment.messageId) {
      this.segment.text += payload.text as string;
    }
    const run = this.runs.get(requestId);
    if (run === undefined) return;
    run.lastSeq = seq;
    const finish = EVENT_FINISHING_TYPES.get(type);
    if (finish !== undefined && run.finish === undefined) {
      run.finish = finish;
      if (this.activeRequestId === requestId) this.activeRequestId = undefined;
    }
  }

  /** The render-ready view (spec §15.3): a copy of the list, the active run, the open segment's overlay, last seq. */
  snapshot(): EventLogSnapshot {
    const requestId = this.activeRequestId;
    const run = this.activeRun;
    const activeRun =
      requestId === undefined || run === undefined
        ? null
        : { requestId, status: 'running' as const, startedSeq: run.startedSeq, lastSeq: run.lastSeq };
    const segment = this.segment;
    const overlay =
      segment !== undefined && activeRun !== null && segment.requestId === activeRun.requestId
        ? { requestId: segment.requestId, messageId: segment.messageId, text: segment.text }
        : null;
    return { messages: [...this.messages], activeRun, overlay, lastSeq: this.lastSeq };
  }
}
