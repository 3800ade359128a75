// The client's model of a conversation, folded from the server's frames. Plain ES module with no DOM access: the page
// renders it, and the load test (Node) folds with the very same code, so both judge "the transcript" identically.
//
// The model only ever holds what the server sent: committed messages, the open segment's streamed text (the overlay),
// and run outcomes. Nothing here invents assistant text, so the page cannot show a fabricated answer.

/** A fresh model for a session. */
export function emptyModel(sessionId) {
  return {
    sessionId,
    // The highest seq folded in; null before the first snapshot (the server then sends a full view).
    lastSeq: null,
    // The epoch of the log lastSeq belongs to (spec §6.7): sent back with it on resume, so that a session created
    // again answers with a reset view instead of its records after a cursor of the old conversation (TJ-LIVE-022).
    epoch: null,
    // Committed transcript messages (user, assistant segments, tool results), as the event log holds them.
    messages: [],
    // The open assistant segment: { requestId, messageId, text, durable }, or null. `text` may run ahead of the records
    // by the tokens the server sent as the model produced them (TJ-LIVE-060); `durable` is how much of it the records
    // folded so far cover. Token text is provisional (TJ-LIVE-061): the segment's message replaces it.
    overlay: null,
    // requestId -> { status: running|done|error|cancelled|interrupted, reason?, finishedSeq?, tool? } (tool: the name of
    // the tool running now)
    runs: {},
    // requestIds of finished runs this client has not acknowledged (seed 001's "missed turn").
    missed: [],
  };
}

/** The model of a full snapshot frame (`ConversationView` plus the run outcomes the server adds). */
export function modelFromSnapshot(payload, runs) {
  const model = emptyModel(payload.sessionId);
  model.lastSeq = payload.lastSeq ?? -1;
  model.epoch = payload.epoch ?? null;
  model.messages = [...payload.messages];
  model.overlay = payload.overlay === null ? null : { ...payload.overlay, durable: payload.overlay.text.length };
  for (const [requestId, status] of Object.entries(runs ?? {})) model.runs[requestId] = { status };
  if (payload.activeRun !== null) {
    // A tool that runs now shows as running, as it does for a page that followed its tool.start (TJ-LIVE-063).
    const running = (payload.activeRun.tools ?? []).filter((call) => call.endedAt === null).at(-1);
    model.runs[payload.activeRun.requestId] = { status: 'running', ...(running ? { tool: running.tool } : {}) };
  }
  for (const run of payload.undelivered) {
    model.runs[run.requestId] = {
      ...(model.runs[run.requestId] ?? {}),
      status: run.status,
      finishedSeq: run.finishedSeq,
    };
    model.missed.push(run.requestId);
  }
  return model;
}

const FINISH = { 'chat.done': 'done', 'chat.error': 'error', 'chat.cancelled': 'cancelled' };

/**
 * Folds the record with seq `model.lastSeq + 1` into the model. Returns 'applied', 'duplicate' (seq already folded:
 * ignored) or 'gap' (a seq is missing: the caller must resynchronise; the model is unchanged).
 * `live` says whether the record arrived while this client was following the session (not in a replay): a run that
 * finishes live is delivered; one that finished in a replay is "missed" until acknowledged.
 */
export function applyRecord(model, record, { live, clientId }) {
  if (model.lastSeq !== null && record.seq <= model.lastSeq) return 'duplicate';
  if (model.lastSeq !== null && record.seq !== model.lastSeq + 1) return 'gap';
  model.lastSeq = record.seq;
  // The log's epoch as a reader folds it: a record that carries one sets it, a checkpoint without one clears it.
  if (typeof record.epoch === 'string' && record.epoch.length > 0 && record.epoch.length <= 128)
    model.epoch = record.epoch;
  else if (record.type === 'checkpoint') model.epoch = null;
  const payload = record.payload ?? {};
  const requestId = payload.request_id;
  switch (record.type) {
    case 'chat.started':
      model.runs[requestId] = { status: 'running' };
      model.overlay = null;
      break;
    case 'assistant.segment.started':
      // Tokens may have opened it already: their text stays.
      if (model.overlay === null || model.overlay.messageId !== payload.message_id)
        model.overlay = { requestId, messageId: payload.message_id, text: '', durable: 0 };
      break;
    case 'chat.delta': {
      const overlay = model.overlay;
      if (overlay === null || overlay.messageId !== payload.message_id) break;
      // The record covers its stretch of the text: tokens showed the same text there already, or less of it.
      const start = overlay.durable ?? 0;
      overlay.durable = start + payload.text.length;
      if (overlay.durable > overlay.text.length) overlay.text = overlay.text.slice(0, start) + payload.text;
      break;
    }
    case 'message_append':
      model.messages.push(payload.message);
      if (model.overlay !== null && model.overlay.messageId === payload.message.id) model.overlay = null;
      break;
    case 'message_edit':
      if (typeof payload.index === 'number') model.messages[payload.index] = payload.message;
      else model.messages = [...payload.messages];
      break;
    case 'undo':
      model.messages.length = Math.max(0, model.messages.length - (payload.n ?? 1));
      break;
    case 'checkpoint':
      // The transport sends a checkpoint without its payload (the whole transcript): its messages are the ones
      // folded already, so only a checkpoint that carries them replaces them.
      if (Array.isArray(payload.messages)) model.messages = [...payload.messages];
      break;
    case 'tool.start':
      model.overlay = null;
      if (model.runs[requestId]) model.runs[requestId].tool = payload.tool;
      break;
    case 'tool.end':
    case 'tool.result':
      model.overlay = null;
      if (model.runs[requestId]) delete model.runs[requestId].tool;
      break;
    case 'delivery.ack':
      if (payload.client_id === clientId) model.missed = model.missed.filter((id) => id !== requestId);
      break;
    default:
      if (record.type in FINISH) {
        const run = model.runs[requestId] ?? {};
        model.runs[requestId] = { status: FINISH[record.type], finishedSeq: record.seq };
        if (payload.reason !== undefined) model.runs[requestId].reason = payload.reason;
        if (payload.error !== undefined) model.runs[requestId].error = payload.error.message;
        if (run.status === undefined) delete model.runs[requestId].tool;
        if (model.overlay !== null && model.overlay.requestId === requestId) model.overlay = null;
        if (!live && !model.missed.includes(requestId)) model.missed.push(requestId);
      }
  }
  return 'applied';
}

/**
 * Folds a token event (TJ-LIVE-060, TJ-LIVE-061): the open segment's text from `offset` on, ahead of its records. A
 * segment not seen yet opens from offset 0; a token that starts past the text held is ignored (the next one from 0, or
 * the records, bring it); text the model produced after a crash's last write is dropped by the run's end, which
 * clears the overlay, and replaced by the partial message recovery commits. Returns whether the model changed.
 */
export function applyToken(model, token) {
  let overlay = model.overlay;
  if (overlay === null || overlay.messageId !== token.messageId) {
    // A token of a segment whose message is committed already came late: the message is the text.
    if (token.offset !== 0 || model.messages.some((message) => message.id === token.messageId)) return false;
    overlay = { requestId: token.requestId, messageId: token.messageId, text: '', durable: 0 };
    model.overlay = overlay;
  }
  if (token.offset > overlay.text.length || token.offset + token.text.length <= overlay.text.length) return false;
  overlay.text = overlay.text.slice(0, token.offset) + token.text;
  return true;
}

/** The transcript as plain text lines: what "the same conversation" means for tests and the load test. */
export function transcriptText(model) {
  return model.messages.map((m) => `${m.role}${m.partial ? ' (partial)' : ''}: ${m.content}`).join('\n');
}
