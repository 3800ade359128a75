import type { EventLogSnapshot, ScannedRun } from '@turnjournal/reader';
import { epochOf } from '@turnjournal/reader/_internals';
import { EVENT_FINISHING_TYPES, EVENT_STREAM_TYPES, type Message, SEGMENT_CLOSING_TYPES } from '@turnjournal/schema';
import type { ConversationView, LiveRecord, LiveToolCall, UndeliveredRun } from './records.js';
import { SegmentText } from './segment-text.js';

/** What the session knows of one run of its log. */
export interface RunInfo {
  readonly requestId: string;
  readonly startedSeq: number;
  readonly startedTs: string;
  lastSeq: number;
  lastTs: string;
  finish: 'done' | 'error' | 'cancelled' | null;
  finishedSeq: number | null;
  finishedTs: string | null;
  acked: boolean;
  readonly ackedBy: Set<string>;
}

/**
 * The fold of a session's durable records (spec §15.1, §15.3) in seq order: the message list, every run of the log,
 * the active run and the open segment. Seeded at open from the writer's recovered snapshot and a scan of the log's
 * runs, then advanced by each record as it becomes durable, so a view built from it is consistent with its `lastSeq`
 * (TJ-LIVE-013).
 */
export class ViewFold {
  messages: Message[];
  lastSeq: number | null;
  /** The epoch of the durable records (spec §6.7): what a cursor given to `subscribe` is checked against. */
  epoch: string | null;
  readonly runs = new Map<string, RunInfo>();
  activeRequestId: string | undefined;
  segment: { requestId: string; messageId: string; text: SegmentText } | undefined;
  /**
   * The tool calls of the run that started last, by id, in start order (TJ-LIVE-063); only the active run's are
   * shown. A fold seeded mid-run (a follower that opened while the run was active) lists the calls of the records it
   * folded since.
   */
  tools = new Map<string, LiveToolCall>();
  toolsOf: string | undefined;

  constructor(snapshot: EventLogSnapshot, scanned: ReadonlyMap<string, ScannedRun>) {
    this.messages = [...snapshot.messages];
    this.lastSeq = snapshot.lastSeq;
    this.epoch = snapshot.epoch;
    for (const run of scanned.values()) {
      this.runs.set(run.requestId, {
        requestId: run.requestId,
        startedSeq: run.startedSeq,
        startedTs: run.startedTs,
        lastSeq: run.finishedSeq ?? run.startedSeq,
        lastTs: run.finishedTs ?? run.startedTs,
        finish: run.finish,
        finishedSeq: run.finishedSeq,
        finishedTs: run.finishedTs,
        acked: run.acked,
        ackedBy: new Set(run.ackedBy),
      });
    }
    const active = snapshot.activeRun;
    if (active !== null) {
      this.activeRequestId = active.requestId;
      const run = this.runs.get(active.requestId);
      if (run !== undefined) run.lastSeq = active.lastSeq;
    }
    const overlay = snapshot.overlay;
    this.segment =
      overlay === null
        ? undefined
        : { requestId: overlay.requestId, messageId: overlay.messageId, text: new SegmentText(overlay.text) };
  }

  /** Applies the next durable record. */
  apply(record: LiveRecord): void {
    this.lastSeq = record.seq;
    const { type } = record;
    // The reader's epoch fold (spec §6.7): a record's epoch sets it, a checkpoint without one clears it.
    const epoch = epochOf(record as unknown as Record<string, unknown>);
    if (epoch !== null || type === 'checkpoint') this.epoch = epoch;
    const body = (record.payload ?? {}) as Record<string, unknown>;
    if (SEGMENT_CLOSING_TYPES.has(type)) this.segment = undefined;
    switch (type) {
      case 'message_append':
        this.messages.push(body.message as Message);
        return;
      case 'message_edit':
        if ('index' in body && 'message' in body) {
          const index = body.index as number;
          if (index < this.messages.length) this.messages[index] = body.message as Message;
        } else this.messages = [...(body.messages as Message[])];
        return;
      case 'undo':
        this.messages.length = Math.max(0, this.messages.length - ((body.n as number | undefined) ?? 1));
        return;
      case 'checkpoint':
        this.messages = [...(body.messages as Message[])];
        return;
      case 'delivery.ack': {
        const run = this.runs.get(body.request_id as string);
        if (run === undefined) return;
        run.acked = true;
        if (typeof body.client_id === 'string') run.ackedBy.add(body.client_id);
        return;
      }
      default:
        if (EVENT_STREAM_TYPES.has(type)) this.#stream(record, body);
    }
  }

  /**
   * {@link ViewFold.apply} of the durable `chat.delta` record `{seq, ts, type, payload: {request_id, message_id,
   * text}}`, given by its members: the pipeline delivers thousands per sync and builds no record for any.
   */
  applyDelta(seq: number, ts: string, requestId: string, messageId: string, text: string): void {
    this.lastSeq = seq;
    // `#stream` for a delta (not a segment-closing type, not a finishing one): the segment's text, the run's times.
    const segment = this.segment;
    if (segment !== undefined && messageId === segment.messageId) segment.text.append(text);
    const run = this.runs.get(requestId);
    if (run === undefined) return;
    run.lastSeq = seq;
    run.lastTs = ts;
  }

  #stream(record: LiveRecord, body: Record<string, unknown>): void {
    const requestId = body.request_id as string;
    const { type, seq, ts } = record;
    if (type === 'chat.started') {
      this.segment = undefined;
      this.tools = new Map();
      this.toolsOf = requestId;
      if (!this.runs.has(requestId))
        this.runs.set(requestId, {
          requestId,
          startedSeq: seq,
          startedTs: ts,
          lastSeq: seq,
          lastTs: ts,
          finish: null,
          finishedSeq: null,
          finishedTs: null,
          acked: false,
          ackedBy: new Set(),
        });
      this.activeRequestId = this.runs.get(requestId)?.finish === null ? requestId : undefined;
      return;
    }
    if ((type === 'tool.start' || type === 'tool.end') && requestId === this.toolsOf) this.#tool(type, body, ts);
    if (type === 'assistant.segment.started') {
      this.segment = { requestId, messageId: body.message_id as string, text: new SegmentText() };
    } else if (type === 'chat.delta' && this.segment !== undefined && body.message_id === this.segment.messageId) {
      if (typeof body.text === 'string') this.segment.text.append(body.text);
    }
    const run = this.runs.get(requestId);
    if (run === undefined) return;
    run.lastSeq = seq;
    run.lastTs = ts;
    const finish = EVENT_FINISHING_TYPES.get(type);
    if (finish !== undefined && run.finish === null) {
      run.finish = finish as 'done' | 'error' | 'cancelled';
      run.finishedSeq = seq;
      run.finishedTs = ts;
      if (this.activeRequestId === requestId) this.activeRequestId = undefined;
    }
  }

  /** A `tool.start` adds a running call; its `tool.end` marks it ended (a repeated or unknown one changes nothing). */
  #tool(type: string, body: Record<string, unknown>, ts: string): void {
    const toolCallId = body.tool_call_id;
    if (typeof toolCallId !== 'string') return;
    const known = this.tools.get(toolCallId);
    if (type === 'tool.start') {
      if (known !== undefined || typeof body.tool !== 'string') return;
      this.tools.set(toolCallId, {
        toolCallId,
        tool: body.tool,
        ...(body.args === undefined ? {} : { args: body.args }),
        startedAt: ts,
        endedAt: null,
      });
    } else if (known !== undefined && known.endedAt === null)
      this.tools.set(toolCallId, {
        ...known,
        endedAt: ts,
        ...(typeof body.is_error === 'boolean' ? { isError: body.is_error } : {}),
      });
  }

  /** Whether a finished run's delivery expired: its finishing record is older than the window (TJ-LIVE-015). */
  static expired(run: RunInfo, now: number, windowMs: number): boolean {
    if (run.finishedTs === null) return false;
    const finished = Date.parse(run.finishedTs);
    return Number.isFinite(finished) && now - finished > windowMs;
  }

  /** The view (spec §18.4) for a client (undelivered: not acknowledged by it, or by anyone when no client is named). */
  view(sessionId: string, clientId: string | undefined, now: number, windowMs: number): ConversationView {
    const requestId = this.activeRequestId;
    const run = requestId === undefined ? undefined : this.runs.get(requestId);
    const activeRun =
      run === undefined
        ? null
        : {
            requestId: run.requestId,
            status: 'running' as const,
            startedSeq: run.startedSeq,
            lastSeq: run.lastSeq,
            startedAt: run.startedTs,
            lastActivityAt: run.lastTs,
            tools: this.toolsOf === run.requestId ? [...this.tools.values()] : [],
          };
    const segment = this.segment;
    const overlay =
      segment !== undefined && activeRun !== null && segment.requestId === activeRun.requestId
        ? { requestId: segment.requestId, messageId: segment.messageId, text: segment.text.toString() }
        : null;
    const undelivered: UndeliveredRun[] = [];
    for (const r of this.runs.values()) {
      if (r.finish === null || r.finishedSeq === null || r.finishedTs === null) continue;
      if (clientId === undefined ? r.acked : r.ackedBy.has(clientId)) continue;
      if (ViewFold.expired(r, now, windowMs)) continue;
      undelivered.push({
        requestId: r.requestId,
        status: r.finish,
        finishedSeq: r.finishedSeq,
        finishedAt: r.finishedTs,
      });
    }
    return {
      sessionId,
      messages: [...this.messages],
      activeRun,
      overlay,
      lastSeq: this.lastSeq,
      epoch: this.epoch,
      undelivered,
    };
  }
}
