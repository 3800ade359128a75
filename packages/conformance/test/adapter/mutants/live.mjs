import { join } from 'node:path';
import { AdapterRequestError } from '@turnjournal/conformance';
import { EventLogFold, readJournal } from '@turnjournal/reader';
import { isValidIdentifier } from '@turnjournal/reader/store-format';
import { openEventLog, openTurnJournal, WriterError } from '@turnjournal/writer';
import { deferCheckpoints, oversizeRefusal } from '@turnjournal/writer/_internals';
import { records } from './shared.mjs';

const RECOVERY = 'server_startup_recovery';
const SHUTDOWN = 'server_shutdown';
const DELIVERY_WINDOW_MS = 48 * 3_600_000;
const FINISHING = new Set(['chat.done', 'chat.error', 'chat.cancelled']);
const TERMINAL = new Set(['completed', 'interrupted']);
// The bound the hand-written sessions state for a client id (TJ-LIVE-057), and the characters of a segment's unwritten
// text that `segments` mode writes whole (TJ-LIVE-059).
const CLIENT_ID_MAX = 128;
// The bounds on a root's open sessions (TJ-LIVE-065) and on a session's window (TJ-LIVE-030) when the first request
// names none.
const MAX_OPEN_SESSIONS = 1000;
const WINDOW_BYTES = 64 * 1024 * 1024;
const SEGMENT_CHUNK_CHARS = 4096;
const TOKEN_MODES = new Set(['durable', 'segments']);
const RESERVED_SESSION_IDS = new Set(['_turn_journal', 'sessions']);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** One session: its two writers, the active run, and the highest seq made durable. */
class HandwrittenSession {
  constructor(broken, root, sessionId, journal, log) {
    this.broken = broken;
    this.journalFile = join(root, '_turn_journal', `${sessionId}.jsonl`);
    this.logFile = join(root, sessionId, 'events.jsonl');
    this.journal = journal;
    this.log = log;
    this.active = null;
    this.subscribers = 0;
    this.lastUsed = 0;
    // The byte bound of the window for live subscribers the server states (TJ-LIVE-030), set when the session opens.
    this.windowBytes = WINDOW_BYTES;
    this.durableSeq = log.lastSeq ?? -1;
    // The first seq a window of records appended by this process would hold (the defect live-window-only).
    this.windowStart = this.durableSeq + 1;
    this.timer = null;
    // A server that handles one request at a time: subscriptions hold this while they wait (TJ-CONF-041 defect).
    this.queue = Promise.resolve();
    // The token mode of the runs the session starts (TJ-LIVE-066).
    this.tokens = 'durable';
    // Receipts the log holds or an ack is writing, by `<request id>\0<client id>` and `<request id>\0*` for any
    // client: the write's promise, which a repeat awaits instead of writing again (TJ-LIVE-056).
    this.receipts = new Map();
    for (const r of records(this.logFile))
      if (r.type === 'delivery.ack' && typeof r.payload?.request_id === 'string')
        this.noteReceipt(r.payload, Promise.resolve());
  }

  noteReceipt({ request_id: requestId, client_id: clientId }, written) {
    if (typeof clientId === 'string') this.receipts.set(`${requestId}\u0000${clientId}`, written);
    if (!this.receipts.has(`${requestId}\u0000*`)) this.receipts.set(`${requestId}\u0000*`, written);
  }

  /** Names the token mode of the session's next runs (`live_open`'s `tokens`); none keeps the mode it has. */
  useTokens(mode) {
    if (this.broken === 'live-tokens-ignored') return; // TJ-CONF-071: `tokens` taken for a member it need not know
    if (mode === undefined) {
      if (this.broken === 'live-tokens-forgotten') this.tokens = 'durable'; // TJ-LIVE-066: the named mode is lost
      return;
    }
    if (mode === 'segments' && this.broken === 'live-durable-only')
      throw new AdapterRequestError('unsupported', 'these sessions write every token (mode durable) only');
    if (!TOKEN_MODES.has(mode)) throw new AdapterRequestError('bad_request', `no token mode ${JSON.stringify(mode)}`);
    this.tokens = mode;
  }

  static async open(broken, root, sessionId) {
    const journal = await openTurnJournal({ dir: join(root, '_turn_journal'), sessionId });
    const log = await openEventLog({ root, sessionId, durability: 'none' });
    const session = new HandwrittenSession(broken, root, sessionId, journal, log);
    await session.recover();
    return session;
  }

  /** Makes everything appended durable (TJ-LIVE-006) and moves the durable seq. */
  async sync() {
    clearTimeout(this.timer);
    this.timer = null;
    // What was appended before the flush began: a record appended while it runs may not be covered (TJ-LIVE-008).
    const target = this.log.lastSeq ?? -1;
    await this.log.flush();
    this.durableSeq = Math.max(this.durableSeq, target);
  }

  /**
   * A delta waits at most 20 ms for its sync (TJ-LIVE-007). The defect live-delivers-unsynced waits 250 ms, a bound
   * too, so that what it delivers early is seen early however loaded the machine is.
   */
  syncSoon() {
    const delay = this.broken === 'live-delivers-unsynced' ? 250 : 20;
    this.timer ??= setTimeout(() => this.sync().catch(() => undefined), delay);
  }

  /** The pending turns of the journal and their `submitted` records, in journal order. */
  pendingTurns() {
    const turns = new Map();
    for (const r of records(this.journalFile)) {
      if (typeof r.turn_id !== 'string') continue;
      const turn = turns.get(r.turn_id) ?? { submitted: null, closed: false };
      if (r.event === 'submitted' && turn.submitted === null) turn.submitted = r;
      if (TERMINAL.has(r.event)) turn.closed = true;
      turns.set(r.turn_id, turn);
    }
    return [...turns].filter(([, t]) => !t.closed && t.submitted !== null);
  }

  /** True when the log takes `message` for its size. */
  fits(message) {
    return oversizeRefusal(this.log, 'message_append', { message }, 1_000_000) === null;
  }

  /**
   * `text`, or its longest prefix whose message (`messageOf(prefix)`) fits in a line (TJ-LIVE-017, TJ-LIVE-019); null,
   * the text dropped, for the defect `dropping` (a recovery that skips what it cannot append whole).
   */
  longestFitting(text, messageOf, dropping) {
    if (this.fits(messageOf(text))) return text;
    if (this.broken === dropping) return null;
    let low = 0;
    let high = text.length - 1;
    while (low < high) {
      const middle = Math.ceil((low + high) / 2);
      if (this.fits(messageOf(text.slice(0, middle)))) low = middle;
      else high = middle - 1;
    }
    return text.slice(0, low);
  }

  /**
   * Startup recovery (spec §18.5), with the log's automatic checkpoints put off until it ends (TJ-LIVE-023): a due
   * checkpoint goes behind the next record after it. The defect live-restart-checkpoints lets one come with recovery's.
   */
  async recover() {
    const defer = this.broken !== 'live-restart-checkpoints';
    if (defer) deferCheckpoints(this.log, true);
    try {
      await this.recoverRuns();
    } finally {
      if (defer) deferCheckpoints(this.log, false);
    }
  }

  async recoverRuns() {
    const snapshot = this.log.snapshot();
    for (const [requestId, run] of this.log.runs()) {
      if (run.finish !== null) continue;
      if (this.broken === 'live-restart-keeps-runs') continue; // TJ-LIVE-016
      const overlay = snapshot.activeRun?.requestId === requestId ? snapshot.overlay : null;
      if (overlay !== null && overlay.text.length > 0 && this.broken !== 'live-restart-drops-partial') {
        const message = (content) => ({
          role: 'assistant',
          content,
          id: overlay.messageId,
          request_id: requestId,
          partial: true,
        });
        const content = this.longestFitting(overlay.text, message, 'live-restart-drops-long-partial');
        if (content !== null) await this.log.appendMessage(message(content)); // TJ-LIVE-017
      }
      await this.log.chatCancelled({ requestId, reason: RECOVERY });
    }
    const runs = this.log.runs();
    for (const [turnId, { submitted }] of this.pendingTurns()) {
      const run = runs.get(turnId);
      if (run === undefined && this.broken !== 'live-restart-forgets-user') {
        const message = (content, partial = false) => ({
          role: 'user',
          content,
          id: `${turnId}.user`,
          request_id: turnId,
          ...(partial ? { partial: true } : {}),
        });
        const content = this.fits(message(submitted.content))
          ? submitted.content
          : this.longestFitting(submitted.content, (text) => message(text, true), 'live-restart-drops-long-user');
        if (content !== null) await this.log.appendMessage(message(content, content !== submitted.content)); // TJ-LIVE-019
      }
      await this.sync();
      if (run?.finish === 'done' && this.broken !== 'live-restart-interrupts-all') await this.journal.complete(turnId);
      else await this.journal.interrupt(turnId, RECOVERY);
    }
    await this.sync();
  }

  statusOf(requestId) {
    if (this.active?.requestId === requestId) return 'running';
    const run = this.log.runs().get(requestId);
    if (run !== undefined) return run.finish ?? 'running';
    return undefined;
  }

  async send(requestId, content) {
    const known =
      this.broken === 'live-retry-restarts'
        ? this.active?.requestId === requestId
          ? 'running'
          : undefined
        : this.statusOf(requestId);
    if (known !== undefined) {
      // TJ-LIVE-034: a request id names one turn; the defect answers other content as a retry of it.
      const first = records(this.logFile).find(
        (r) => r.type === 'message_append' && r.payload?.message?.id === `${requestId}.user`,
      )?.payload.message.content;
      if (first !== undefined && first !== content && this.broken !== 'live-retry-other-content')
        throw new AdapterRequestError('refused', `request ${requestId} was sent with other content`);
      return { created: false, status: known }; // TJ-LIVE-002
    }
    if (this.active !== null) {
      const message = `run ${this.active.requestId} is active`;
      if (this.broken === 'live-busy-fails') throw new Error(message); // TJ-CONF-040: answered failed
      throw new AdapterRequestError('refused', message);
    }
    const turnId = this.broken === 'live-own-turn-ids' ? `turn-${requestId}` : requestId; // TJ-LIVE-001
    const submitting = this.journal.submit({ turnId, content, streamId: requestId });
    if (this.broken !== 'live-started-early') await submitting; // TJ-LIVE-003
    await this.log.chatStarted({ requestId, content });
    await submitting;
    await this.log.appendMessage({ role: 'user', content, id: `${requestId}.user`, request_id: requestId });
    await this.sync();
    await this.journal.workerStarted(turnId);
    this.active = { requestId, turnId, segment: null, segments: 0, systems: 0, tokens: this.tokens };
    return { created: true, status: 'running' };
  }

  /** The token mode of `run`'s deltas: its own (TJ-LIVE-058), or for the defect the session's at the moment. */
  modeOf(run) {
    return this.broken === 'live-tokens-follow-session' ? this.tokens : run.tokens;
  }

  /** Commits the open segment as an assistant message (TJ-LIVE-004). */
  async closeSegment(run, byTool, partial = false) {
    const segment = run.segment;
    run.segment = null;
    if (segment === null || segment.text.length === 0) return;
    if (byTool && this.broken === 'live-tool-drops-segment') return;
    // TJ-LIVE-058: the defect writes a durable segment's text as one delta at its close, not one per token.
    if (this.broken === 'live-durable-one-delta' && segment.held.length > 0)
      await this.log.delta({ requestId: run.requestId, messageId: segment.id, text: segment.held });
    await this.log.appendMessage({
      role: 'assistant',
      content: segment.text,
      id: segment.id,
      request_id: run.requestId,
      // TJ-LIVE-035: a run cut short leaves its open segment partial; the defect commits it as if whole.
      ...(partial && this.broken !== 'live-cancel-not-partial' ? { partial: true } : {}),
    });
  }

  async step(requestId, step) {
    const run = this.active;
    if (run === null || run.requestId !== requestId)
      throw new AdapterRequestError('refused', `run ${requestId} is not active`);
    switch (step.step) {
      case 'delta':
        if (this.broken !== 'live-syncs-every-delta')
          return this.appendDelta(run, step.text).then(() => this.syncSoon());
        // TJ-LIVE-007: each delta appended and synced before the next one is taken.
        this.deltas = (this.deltas ?? Promise.resolve()).then(async () => {
          await this.appendDelta(run, step.text);
          await this.sync();
        });
        return this.deltas;
      case 'tool_start':
        await this.closeSegment(run, true);
        await this.log.toolStart({ requestId, toolCallId: step.toolCallId, tool: step.tool, args: step.args });
        return this.boundary(true);
      case 'tool_end':
        await this.closeSegment(run, true);
        await this.log.toolEnd({ requestId, toolCallId: step.toolCallId, isError: step.isError });
        return this.boundary(true);
      case 'system': {
        // TJ-LIVE-062: a boundary, the open segment committed first; the defect live-system-first commits it after.
        const segmentFirst = this.broken !== 'live-system-first';
        if (segmentFirst) await this.closeSegment(run, false);
        run.systems += 1;
        await this.log.appendMessage({
          role: 'system',
          content: step.text,
          // TJ-LIVE-062: the defect gives every system message of the run the same id.
          id: this.broken === 'live-system-same-id' ? `${requestId}.system` : `${requestId}.system${run.systems}`,
          request_id: requestId,
        });
        if (!segmentFirst) await this.closeSegment(run, false);
        // TJ-LIVE-062: durable before the answer; the defect answers with the message held (a delta's wait).
        if (this.broken === 'live-system-unsynced') return this.syncSoon();
        return this.boundary();
      }
      case 'tool_result':
        await this.closeSegment(run, true);
        await this.log.toolResult({ requestId, toolCallId: step.toolCallId, output: step.output });
        if (this.broken !== 'live-tool-result-uncommitted')
          await this.log.appendMessage({
            role: 'tool',
            content: step.output,
            id: `${requestId}.tool.${step.toolCallId}`,
            tool_call_id: step.toolCallId,
            request_id: requestId,
          });
        return this.boundary(true);
      default: {
        await this.closeSegment(run, false, step.step !== 'done');
        if (this.broken === 'live-turn-first' && step.step === 'done') await this.journal.complete(run.turnId); // TJ-LIVE-005
        if (step.step === 'done') await this.log.chatDone({ requestId });
        else if (step.step === 'error') await this.log.chatError({ requestId, error: { message: step.message } });
        else await this.log.chatCancelled({ requestId, ...(step.reason === undefined ? {} : { reason: step.reason }) });
        // TJ-EVENT-012: the defect records a delivery no client confirmed.
        if (step.step === 'done' && this.broken === 'live-auto-ack') await this.log.ack(requestId, {});
        await this.boundary();
        // TJ-LIVE-035: the turn is interrupted with the caller's reason; the defect with a reason of its own.
        const reason = this.broken === 'live-cancel-reason-lost' ? undefined : step.reason;
        if (step.step !== 'done')
          await this.journal.interrupt(run.turnId, step.step === 'error' ? 'error' : (reason ?? 'cancelled'));
        else if (this.broken !== 'live-turn-first') await this.journal.complete(run.turnId);
        this.active = null;
      }
    }
  }

  /**
   * Appends a delta, opening a segment first when none is open: in `durable` mode one `chat.delta` per delta; in
   * `segments` mode (TJ-LIVE-059) none, unless the unwritten text now ends a paragraph (written through the last one)
   * or reaches SEGMENT_CHUNK_CHARS, the segment's start written with its first text.
   */
  async appendDelta(run, text) {
    const segments = this.modeOf(run) === 'segments';
    if (run.segment === null) {
      run.segment = { id: `${run.requestId}.a${++run.segments}`, text: '', tail: '', started: false, held: '' };
      if (!segments) {
        await this.log.segmentStarted({ requestId: run.requestId, messageId: run.segment.id });
        run.segment.started = true;
      }
    }
    const segment = run.segment;
    segment.text += text;
    if (!segments) {
      if (this.broken === 'live-durable-one-delta') segment.held += text;
      else await this.log.delta({ requestId: run.requestId, messageId: segment.id, text });
      return;
    }
    const tail = segment.tail + text;
    // TJ-LIVE-059: the defect writes every token's text as it comes.
    const paragraphEnd = tail.lastIndexOf('\n\n');
    const cut =
      this.broken === 'live-segments-per-token' || tail.length >= SEGMENT_CHUNK_CHARS
        ? tail.length
        : paragraphEnd < 0
          ? 0
          : paragraphEnd + 2;
    segment.tail = tail.slice(cut);
    if (cut === 0) return;
    if (!segment.started) {
      await this.log.segmentStarted({ requestId: run.requestId, messageId: segment.id });
      segment.started = true;
    }
    await this.log.delta({ requestId: run.requestId, messageId: segment.id, text: tail.slice(0, cut) });
  }

  /** Every step but a delta makes what it appended durable, and refreshes the defect's cached view (live-stale-view). */
  async boundary(afterTool = false) {
    if (!(afterTool && this.broken === 'live-unsynced-tools')) await this.sync(); // TJ-LIVE-006
    if (this.broken === 'live-stale-view') this.view = await this.computeView(undefined);
  }

  /** The fold of the durable records (TJ-LIVE-013), and the finished runs `clientId` has not acknowledged. */
  async snapshot(clientId) {
    await this.sync();
    // A view cached at the last boundary (deltas do not refresh it), stamped with the current last seq: TJ-LIVE-013.
    if (this.broken === 'live-stale-view' && this.view !== undefined)
      return { ...this.view, last_seq: this.durableSeq < 0 ? null : this.durableSeq };
    return this.computeView(clientId);
  }

  async computeView(clientId) {
    const all = records(this.logFile).filter((r) => typeof r.seq === 'number' && r.seq <= this.durableSeq);
    const fold = new EventLogFold();
    for await (const batch of readJournal(this.logFile))
      for (const item of batch)
        if (item.kind === 'record' && item.record.value.seq <= this.durableSeq)
          fold.add(item.record, { file: this.logFile });
    const state = fold.finish();
    const finished = new Map();
    const acked = new Set();
    for (const r of all) {
      const id = r.payload?.request_id;
      if (FINISHING.has(r.type) && !finished.has(id)) finished.set(id, r.ts);
      if (r.type === 'delivery.ack' && (clientId === undefined || r.payload.client_id === clientId)) acked.add(id);
    }
    const now = Date.now();
    const undelivered = [...finished]
      .filter(
        ([id, ts]) =>
          !acked.has(id) && (this.broken === 'live-never-expires' || now - Date.parse(ts) <= DELIVERY_WINDOW_MS),
      )
      .map(([id]) => id); // TJ-LIVE-015
    const messages =
      this.broken === 'live-snapshot-bare-messages'
        ? state.messages.map((m) => ({ role: m.role, content: m.content }))
        : [...state.messages];
    const view = {
      last_seq: state.lastSeq,
      messages,
      active_request_id: state.activeRun?.requestId ?? null,
      overlay: state.overlay?.text ?? null,
      undelivered,
      // TJ-LIVE-021: the defect's snapshot says nothing of the epoch, so a client has none to store.
      epoch: this.broken === 'live-snapshot-no-epoch' ? null : state.epoch,
      tools: this.toolsOf(all, state.activeRun?.requestId),
    };
    return view;
  }

  /**
   * The tool calls of the active run `requestId` that `durable` records hold, in start order, each ended by its
   * `tool.end` (TJ-LIVE-063); the defect live-snapshot-running-tools lists only the calls still running.
   */
  toolsOf(durable, requestId) {
    const calls = new Map();
    if (requestId === undefined) return [];
    for (const r of durable) {
      const p = r.payload ?? {};
      if (p.request_id !== requestId) continue;
      if (r.type === 'tool.start' && !calls.has(p.tool_call_id))
        calls.set(p.tool_call_id, {
          tool_call_id: p.tool_call_id,
          tool: p.tool,
          ...(p.args === undefined ? {} : { args: p.args }),
          started_ts: r.ts,
          ended_ts: null,
        });
      const call = calls.get(p.tool_call_id);
      if (r.type === 'tool.end' && call !== undefined && call.ended_ts === null)
        calls.set(p.tool_call_id, {
          ...call,
          ended_ts: r.ts,
          ...(typeof p.is_error === 'boolean' ? { is_error: p.is_error } : {}),
        });
    }
    const listed = [...calls.values()];
    return this.broken === 'live-snapshot-running-tools' ? listed.filter((c) => c.ended_ts === null) : listed;
  }

  async ack(requestId, options) {
    const { clientId } = options;
    // TJ-LIVE-057: the defect records any client id, however long (or empty).
    if (
      clientId !== undefined &&
      (clientId.length === 0 || clientId.length > CLIENT_ID_MAX) &&
      this.broken !== 'live-ack-any-client-id'
    )
      throw new AdapterRequestError('bad_request', `a client id is 1 to ${CLIENT_ID_MAX} characters (TJ-LIVE-057)`);
    const run = this.log.runs().get(requestId);
    if (run === undefined || run.finishedSeq === null)
      throw new AdapterRequestError('refused', `run ${requestId} has not finished`);
    if (
      options.throughSeq !== undefined &&
      options.throughSeq < run.finishedSeq &&
      this.broken !== 'live-ack-unchecked'
    )
      throw new AdapterRequestError(
        'refused',
        `through_seq ${options.throughSeq} is below the finishing record ${run.finishedSeq}`,
      ); // TJ-LIVE-014
    const beyond = options.throughSeq !== undefined && options.throughSeq > this.durableSeq;
    if (beyond && this.broken !== 'live-ack-unchecked' && this.broken !== 'live-ack-beyond-log')
      throw new AdapterRequestError(
        'refused',
        `through_seq ${options.throughSeq} is beyond the last durable record ${this.durableSeq}`,
      ); // TJ-LIVE-014
    // A lenient hub that takes such an ack as one through its last durable record: the record it writes is valid
    // (TJ-EVENT-021 holds), but the client's bad receipt is accepted instead of refused.
    if (beyond && this.broken === 'live-ack-beyond-log') options = { ...options, throughSeq: this.durableSeq };
    // TJ-LIVE-056: a receipt the log holds, or one being written, is not written again; the defect writes each repeat.
    const held = this.receipts.get(`${requestId}\u0000${clientId ?? '*'}`);
    if (held !== undefined && this.broken !== 'live-ack-repeats') return held;
    const written = (async () => {
      await this.log.ack(requestId, options);
      if (this.broken !== 'live-ack-unsynced') await this.sync(); // TJ-CONF-042
    })();
    this.noteReceipt({ request_id: requestId, client_id: clientId }, written);
    return written;
  }

  /** A subscription keeps its session busy while it waits (TJ-LIVE-065). */
  async subscribe(options) {
    this.subscribers += 1;
    try {
      return await this.follow(options);
    } finally {
      this.subscribers -= 1;
    }
  }

  /** Polls the log for durable records after the cursor (TJ-LIVE-009), with the snapshots of TJ-LIVE-010/018. */
  async follow({ after, epoch, untilSeq, timeoutMs }) {
    // A server that delivers what it wrote (the defect live-delivers-unsynced) has no reason to sync first; a sync
    // here would cover the records the subscription is about to read and hide the defect.
    if (this.broken !== 'live-delivers-unsynced') await this.sync();
    const target = untilSeq ?? this.durableSeq;
    const deadline = Date.now() + timeoutMs;
    const events = [];
    let cursor = this.broken === 'live-subscribe-repeats' ? after - 1 : after;
    // TJ-LIVE-020: a cursor of another history (its epoch is not the log's) gets the whole view; the defect serves
    // the cursor alone, so a client of a removed log receives the new log's records after it.
    if (epoch !== undefined && after >= 0 && this.broken !== 'live-epoch-ignored') {
      const { epoch: current } = await this.computeView(undefined);
      if (epoch !== current) {
        events.push({ snapshot: 'reset', last_seq: this.durableSeq < 0 ? null : this.durableSeq });
        cursor = this.durableSeq;
      }
    }
    if (events.length === 0 && after > this.durableSeq) {
      if (this.broken !== 'live-ahead-silent')
        events.push({ snapshot: 'ahead', last_seq: this.durableSeq < 0 ? null : this.durableSeq });
      cursor = this.durableSeq;
    }
    if (this.broken === 'live-window-only' && cursor + 1 < this.windowStart) {
      // TJ-LIVE-012: a server that serves only its in-memory window answers an older cursor with a snapshot.
      events.push({ snapshot: 'compacted', last_seq: this.durableSeq < 0 ? null : this.durableSeq });
      cursor = this.durableSeq;
    }
    while (cursor < target && Date.now() < deadline) {
      // TJ-LIVE-008: only what is durable; the defect delivers whatever the file holds, synced or not.
      const durable = this.broken === 'live-delivers-unsynced' ? Number.POSITIVE_INFINITY : this.durableSeq;
      const next = records(this.logFile).filter((r) => typeof r.seq === 'number' && r.seq > cursor && r.seq <= durable);
      if (next.length === 0) {
        await sleep(this.broken === 'live-delivers-unsynced' ? 1 : 5);
        continue;
      }
      if (next[0].seq !== cursor + 1 && this.broken !== 'live-skips-gap') {
        events.push({ snapshot: 'compacted', last_seq: durable }); // TJ-LIVE-018
        cursor = durable;
        continue;
      }
      // TJ-LIVE-067: a window that counts a checkpoint at its line, the whole conversation, cuts off every subscriber
      // once the conversation is longer than the window, however promptly it reads.
      const checkpoint = next.find((r) => String(r.type).startsWith('checkpoint'));
      if (
        this.broken === 'live-window-counts-checkpoints' &&
        checkpoint !== undefined &&
        JSON.stringify(checkpoint).length > this.windowBytes
      ) {
        events.push({ cut_off: cursor });
        break;
      }
      if (this.broken === 'live-cuts-off-bursts' && next.length > 64) {
        // TJ-LIVE-030: a server whose window holds 64 records cuts off whoever one commit carried past it.
        events.push({ cut_off: cursor });
        break;
      }
      for (const record of next) {
        events.push({ seq: record.seq });
        cursor = record.seq;
        if (cursor >= target) break;
      }
    }
    return events;
  }

  /**
   * A clean shutdown (TJ-LIVE-036): the active run is cancelled with reason `server_shutdown`, its open segment
   * committed as partial and its turn interrupted, before the writers close; the defect leaves it for recovery.
   */
  async shutDown() {
    const run = this.active;
    if (run === null || this.broken === 'live-shutdown-abandons') return;
    await this.closeSegment(run, false, true);
    await this.log.chatCancelled({ requestId: run.requestId, reason: SHUTDOWN });
    await this.sync();
    await this.journal.interrupt(run.turnId, SHUTDOWN);
    this.active = null;
  }

  async close() {
    await this.shutDown();
    await this.sync().catch(() => undefined);
    await this.log.close();
    await this.journal.close();
  }
}

/** Turns a writer's refusal into the `refused` answer. */
async function refusing(call) {
  try {
    return await call();
  } catch (error) {
    if (
      error instanceof WriterError &&
      ['illegal_transition', 'turn_id_conflict', 'run_active', 'duplicate_request'].includes(error.code)
    )
      throw new AdapterRequestError('refused', error.message);
    throw error;
  }
}

/** The snapshot a reader folds from the event log `file`, with no session around it (the defect live-reads-any-session). */
async function readSnapshot(file) {
  const fold = new EventLogFold();
  for await (const batch of readJournal(file))
    for (const item of batch) if (item.kind === 'record') fold.add(item.record, { file });
  const state = fold.finish();
  return {
    last_seq: state.lastSeq,
    messages: state.messages,
    active_request_id: state.activeRun?.requestId ?? null,
    overlay: state.overlay?.text ?? null,
    undelivered: state.undelivered.map((run) => run.requestId),
  };
}

/** The hand-written `live` operations; `broken` names the one rule they break (null: none). */
function handwrittenLive(broken) {
  return () => {
    const sessions = new Map();
    // Sessions that finished opening, those closing for room, and each root's bound (TJ-LIVE-065).
    const open = new Map();
    const closing = new Map();
    const bounds = new Map();
    let used = 0;
    let busy = Promise.resolve();
    const session = (ref, limits) => {
      // TJ-FAM-010/011: no path from an invalid session id. The defect live-reads-any-session checks it only before it
      // opens the writers, so a snapshot still reads the log the id points at.
      if (!isValidIdentifier(ref.sessionId))
        throw new AdapterRequestError(
          'bad_request',
          `session id ${JSON.stringify(ref.sessionId)} is not an identifier`,
        );
      // TJ-LIVE-037: the layout's own directory names, in any case; the defect opens a session under them.
      if (RESERVED_SESSION_IDS.has(ref.sessionId.toLowerCase()) && broken !== 'live-reserved-session-ids')
        throw new AdapterRequestError('bad_request', `session id ${JSON.stringify(ref.sessionId)} is reserved`);
      // TJ-CONF-073, TJ-CONF-074: bounds fixed whatever the first request asks (live-fixed-bounds, not a defect).
      const asked = broken === 'live-fixed-bounds' ? undefined : limits;
      if (!bounds.has(ref.root))
        bounds.set(ref.root, {
          maxOpenSessions: asked?.maxOpenSessions ?? MAX_OPEN_SESSIONS,
          windowBytes: asked?.windowBytes ?? WINDOW_BYTES,
        });
      const key = `${ref.root}\u0000${ref.sessionId}`;
      let opening = sessions.get(key);
      if (opening === undefined) {
        const room = makeRoom(ref.root);
        opening = room
          .then(() => closing.get(key))
          .then(() => HandwrittenSession.open(broken, ref.root, ref.sessionId))
          .then((opened) => {
            opened.windowBytes = bounds.get(ref.root).windowBytes;
            return opened;
          });
        sessions.set(key, opening);
        opening.then(
          (opened) => open.set(key, opened),
          () => sessions.delete(key),
        );
      }
      return opening.then((opened) => {
        used += 1;
        opened.lastUsed = used;
        return opened;
      });
    };
    /**
     * TJ-LIVE-065: at the bound, closes the idle session of `root` used least recently (no active run, no subscriber)
     * and resolves once it closed; throws the refusal at once when every one is busy or still opening. The defect
     * live-evicts-busy closes the one used least recently whatever it is doing.
     */
    const makeRoom = (root) => {
      const ofRoot = [...sessions.keys()].filter((key) => key.startsWith(`${root}\u0000`));
      const { maxOpenSessions } = bounds.get(root);
      if (ofRoot.length < maxOpenSessions) return Promise.resolve();
      let victim;
      for (const key of ofRoot) {
        const opened = open.get(key);
        if (opened === undefined) continue;
        if (broken !== 'live-evicts-busy' && (opened.active !== null || opened.subscribers > 0)) continue;
        if (victim === undefined || opened.lastUsed < open.get(victim).lastUsed) victim = key;
      }
      if (victim === undefined)
        throw new AdapterRequestError('refused', `${maxOpenSessions} sessions are open, each busy (too_many_sessions)`);
      const closed = open.get(victim);
      sessions.delete(victim);
      open.delete(victim);
      const done = closed.close().finally(() => closing.delete(victim));
      closing.set(victim, done);
      return done;
    };
    // TJ-CONF-041 defect: one request at a time, a waiting subscription included.
    const serial = (task) => {
      if (broken !== 'live-subscribe-blocks') return task();
      const run = busy.then(task, task);
      busy = run.catch(() => undefined);
      return run;
    };
    return {
      open: (ref, tokens, limits) =>
        serial(async () => {
          const opened = await session(ref, limits);
          opened.useTokens(tokens);
          const { durableSeq } = opened;
          const lastSeq = durableSeq < 0 ? null : durableSeq;
          const { maxOpenSessions, windowBytes } = bounds.get(ref.root);
          // TJ-CONF-073, TJ-CONF-074: the defects keep their bound and do not say what it is.
          const stated = {
            ...(broken === 'live-session-bound-unstated' ? {} : { maxOpenSessions }),
            ...(broken === 'live-window-unstated' ? {} : { windowBytes }),
          };
          // TJ-CONF-070: the defect does not state the bound its sessions keep.
          return broken === 'live-client-id-bound-unstated'
            ? { lastSeq, ...stated }
            : { lastSeq, clientIdMax: CLIENT_ID_MAX, ...stated };
        }),
      send: (ref, requestId, content) =>
        serial(async () => refusing(async () => (await session(ref)).send(requestId, content))),
      step: (ref, requestId, step) =>
        serial(async () => refusing(async () => (await session(ref)).step(requestId, step))),
      snapshot: (ref, clientId) =>
        serial(async () =>
          broken === 'live-reads-any-session' && !isValidIdentifier(ref.sessionId)
            ? readSnapshot(join(ref.root, ref.sessionId, 'events.jsonl'))
            : (await session(ref)).snapshot(clientId),
        ),
      ack: (ref, requestId, options) => serial(async () => (await session(ref)).ack(requestId, options)),
      subscribe: (ref, options) => serial(async () => (await session(ref)).subscribe(options)),
      close: async () => {
        for (const opening of sessions.values()) await (await opening).close().catch(() => undefined);
        await Promise.allSettled(closing.values());
        sessions.clear();
      },
    };
  };
}

/** The defects, by name: overrides of the reference implementation. */
export const liveDefects = Object.fromEntries([
  ...[
    'live-own-turn-ids',
    'live-retry-restarts',
    'live-busy-fails',
    'live-tool-drops-segment',
    'live-tool-result-uncommitted',
    'live-subscribe-repeats',
    'live-ahead-silent',
    'live-skips-gap',
    'live-subscribe-blocks',
    'live-stale-view',
    'live-snapshot-bare-messages',
    'live-ack-unchecked',
    'live-ack-beyond-log',
    'live-auto-ack',
    'live-reads-any-session',
    'live-never-expires',
    'live-restart-keeps-runs',
    'live-restart-interrupts-all',
    'live-restart-drops-partial',
    'live-restart-forgets-user',
    'live-restart-drops-long-partial',
    'live-restart-drops-long-user',
    'live-started-early',
    'live-delivers-unsynced',
    'live-window-only',
    'live-cuts-off-bursts',
    'live-turn-first',
    'live-unsynced-tools',
    'live-syncs-every-delta',
    'live-ack-unsynced',
    'live-epoch-ignored',
    'live-snapshot-no-epoch',
    'live-ack-repeats',
    'live-ack-any-client-id',
    'live-system-same-id',
    'live-system-first',
    'live-system-unsynced',
    'live-durable-one-delta',
    'live-segments-per-token',
    'live-tokens-follow-session',
    'live-tokens-forgotten',
    'live-tokens-ignored',
    'live-snapshot-running-tools',
    'live-retry-other-content',
    'live-reserved-session-ids',
    'live-cancel-not-partial',
    'live-cancel-reason-lost',
    'live-client-id-bound-unstated',
    'live-shutdown-abandons',
    'live-restart-checkpoints',
    'live-evicts-busy',
    'live-window-counts-checkpoints',
    'live-session-bound-unstated',
    'live-window-unstated',
  ].map((name) => [name, { live: handwrittenLive(name) }]),
  // Not a defect: the hand-written live sessions with nothing broken, which must pass (the defects' control).
  ['live-handwritten', { live: handwrittenLive(null) }],
  // Not a defect either: sessions that give no session token mode `segments` and say so (`unsupported`, TJ-CONF-071).
  ['live-durable-only', { live: handwrittenLive('live-durable-only') }],
  // Nor this: sessions whose bounds on open sessions and on the window are fixed, and stated (TJ-CONF-073, TJ-CONF-074).
  ['live-fixed-bounds', { live: handwrittenLive('live-fixed-bounds') }],
]);
