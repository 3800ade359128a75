// The resumable chat page: seed 003's contract over @turnjournal/client, and the states a user must understand.
// No framework and no build step: the server serves the client package's files at /client/. The model (fold.js) is the
// only state; render() draws it.
import { LiveClient } from '/client/index.js';
import { applyRecord, applyToken, emptyModel, modelFromSnapshot } from './fold.js';

const params = new URLSearchParams(location.search);
const BACKOFF_MS = Number(params.get('backoff') ?? 250); // first reconnect delay, doubled per failure
const BACKOFF_MAX_MS = Number(params.get('backoffMax') ?? 5000);

const newId = (prefix) =>
  `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`.replace(/[^A-Za-z0-9._-]/g, '');

// ---- identity and what survives a closed tab (localStorage) ----------------------------------------------------------
const sessionId = params.get('session') ?? localStorage.getItem('tj-chat.session') ?? newId('s');
localStorage.setItem('tj-chat.session', sessionId);
const clientId = localStorage.getItem('tj-chat.client') ?? newId('c');
localStorage.setItem('tj-chat.client', clientId);
const STATE_KEY = `tj-chat.state.${sessionId}`; // { lastSeq, model }: the model is folded through exactly lastSeq
const PENDING_KEY = `tj-chat.pending.${sessionId}`; // a send the server has not confirmed: resent with its requestId

let model = loadModel();
let pending = readJson(PENDING_KEY);
let client = null;
let phase = 'connecting'; // connecting | replaying | live | reconnecting | offline
let saveTimer = null;
let notice = '';
const acked = new Set(); // acks sent on this page (the delivery.ack record confirms them)
// Runs this page load saw running (live, in a replay or in a snapshot): when one ends while the page stays open, in view
// and online, its end is shown here even if it comes in a replay after a reconnect — the server restarted, the user
// did not leave: it is not "missed". A page that went offline was away: what ended meanwhile is missed until acked.
const watched = new Set();
let wentOffline = false;
const stats = { frames: 0, records: 0, tokens: 0, duplicates: 0, gaps: 0, snapshots: 0, connects: 0 };
// For tests and the curious: read-only views of the page's state.
window.__chat = { stats, sessionId, clientId, model: () => model, phase: () => phase };

function readJson(key) {
  try {
    return JSON.parse(localStorage.getItem(key) ?? 'null');
  } catch {
    return null;
  }
}

function loadModel() {
  const stored = readJson(STATE_KEY);
  if (stored?.model?.sessionId !== sessionId || !Number.isInteger(stored.model.lastSeq)) return emptyModel(sessionId);
  const loaded = stored.model;
  // A model saved before token text was told apart: its overlay is all records.
  if (loaded.overlay && loaded.overlay.durable === undefined) loaded.overlay.durable = loaded.overlay.text.length;
  return loaded;
}

function saveSoon() {
  if (saveTimer !== null) return;
  saveTimer = setTimeout(saveNow, 100);
}

function saveNow() {
  if (saveTimer !== null) clearTimeout(saveTimer);
  saveTimer = null;
  try {
    localStorage.setItem(STATE_KEY, JSON.stringify({ lastSeq: model.lastSeq, model }));
  } catch {
    // Quota: keep only the session; the next load asks for the full view instead of a replay.
    localStorage.removeItem(STATE_KEY);
  }
}
addEventListener('pagehide', saveNow);

// ---- the connection: one LiveClient, from the model's cursor -----------------------------------------------------------
function connect() {
  if (!navigator.onLine) return setPhase('offline');
  stats.connects += 1;
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws?session=${encodeURIComponent(sessionId)}`;
  const created = new LiveClient({
    url,
    clientId,
    // The epoch travels with the cursor (a model saved before epochs has none: the cursor alone then decides).
    cursor: { lastSeq: model.lastSeq, ...(model.epoch === undefined ? {} : { epoch: model.epoch }) },
    backoffMs: BACKOFF_MS,
    maxBackoffMs: BACKOFF_MAX_MS,
    onEvent: (event) => {
      if (client === created) onEvent(event);
    },
  });
  client = created;
  setPhase(model.lastSeq === null ? 'connecting' : 'reconnecting');
  // A send the server has not confirmed (this page's, or one saved by a page that closed): the client keeps it and
  // resends it with its requestId on every reconnect until the server answers (TJ-LIVE-055).
  if (pending !== null) submit(pending);
}

// The browser's own network signal: a lost network does not always close a socket, and waiting for a timeout would
// leave the user staring at a frozen answer. Going offline drops the client; coming back connects a new one at once,
// from the model's cursor.
addEventListener('offline', () => {
  const closing = client;
  client = null;
  closing?.close();
  wentOffline = true;
  setPhase('offline');
});
addEventListener('online', () => {
  if (client === null) connect();
});

function onEvent(event) {
  switch (event.kind) {
    case 'snapshot':
      stats.frames += 1;
      stats.snapshots += 1;
      model = modelFromSnapshot(event.view, event.runs);
      if (event.view.activeRun !== null) watched.add(event.view.activeRun.requestId);
      saveSoon();
      render();
      return;
    case 'record':
      stats.frames += 1;
      return onRecord(event.record);
    case 'token':
      stats.frames += 1;
      stats.tokens += 1;
      if (applyToken(model, event)) render();
      return;
    case 'state':
      stats.duplicates = client?.duplicates ?? stats.duplicates;
      stats.gaps = client?.gaps ?? stats.gaps;
      if (event.state === 'closed') return;
      setPhase(event.state === 'connecting' ? 'connecting' : event.state);
      if (event.state === 'live') {
        ackShown();
        wentOffline = false;
      }
      return;
    case 'error':
      notice = `Server: ${event.message}`;
      render();
      return;
  }
}

function onRecord(record) {
  stats.records += 1;
  const requestId = record.payload?.request_id;
  if (record.type === 'chat.started') watched.add(requestId);
  // Delivered: a run that ends while this page follows it live, or that this page saw running and whose end it shows
  // now (a replay after a reconnect, a server restart included). Missed: it ended while the page was closed or hidden.
  const shown =
    document.visibilityState === 'visible' && (phase === 'live' || (watched.has(requestId) && !wentOffline));
  const result = applyRecord(model, record, { live: shown, clientId });
  if (result === 'duplicate') {
    stats.duplicates += 1;
    return;
  }
  if (result === 'gap') {
    // The client never delivers around a hole; a model that disagrees with it starts over from a full view.
    stats.gaps += 1;
    model = emptyModel(sessionId);
    client?.close();
    client = null;
    connect();
    return;
  }
  if (shown && ['chat.done', 'chat.error', 'chat.cancelled'].includes(record.type)) ack(requestId);
  saveSoon();
  render();
}

function ack(requestId) {
  if (acked.has(requestId) || client === null) return;
  acked.add(requestId);
  // Queued by the client until it is live again; through the last seq folded (the finishing record or later).
  client.ack(requestId, model.lastSeq ?? undefined);
}

/** Acks the ends this page showed while it was not live (a replay after a reconnect). */
function ackShown() {
  for (const [requestId, run] of Object.entries(model.runs))
    if (run.status !== 'running' && watched.has(requestId) && !model.missed.includes(requestId)) ack(requestId);
}

// ---- sending -------------------------------------------------------------------------------------------------------
function clearPending() {
  pending = null;
  localStorage.removeItem(PENDING_KEY);
  render();
}

function submit(entry) {
  client
    ?.send(entry.content, { requestId: entry.requestId })
    .then(() => {
      if (pending?.requestId === entry.requestId) clearPending();
    })
    .catch((error) => {
      // Closed before an answer (offline): the next client resends it. Refused: tell the user, give the text back.
      if (error.code === 'client_closed' || error.code === 'invalid_request') return;
      if (pending?.requestId === entry.requestId) {
        const input = document.getElementById('input');
        if (input.value === '') input.value = entry.content;
        clearPending();
      }
      notice = error.code === 'run_active' ? 'Wait for the answer to finish before sending.' : error.message;
      render();
    });
}

function onSend(event) {
  event.preventDefault();
  notice = '';
  // One send at a time: a double click or a retry while one is unconfirmed is the same turn, which the client keeps
  // and resends with its requestId, never a second one.
  if (pending !== null) return;
  const input = document.getElementById('input');
  const content = input.value.trim();
  if (content === '' || activeRun() !== undefined) return;
  pending = { requestId: newId('r'), content };
  localStorage.setItem(PENDING_KEY, JSON.stringify(pending));
  input.value = '';
  submit(pending);
  render();
}

/** Stop: cancels the active run by its id; the server keeps what was written as a partial message. */
function onStop() {
  const requestId = activeRun();
  if (requestId === undefined || client === null) return;
  client.cancel(requestId);
  notice = 'Stopping…';
  render();
}

function activeRun() {
  return Object.entries(model.runs).find(([, run]) => run.status === 'running')?.[0];
}

// ---- rendering -----------------------------------------------------------------------------------------------------
const PHASE_TEXT = {
  connecting: 'Connecting…',
  replaying: 'Catching up…',
  live: 'Connected',
  reconnecting: 'Connection lost — reconnecting…',
  offline: 'Offline — will reconnect when the network is back',
};

function setPhase(next) {
  phase = next;
  render();
}

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** The transcript as keyed items: committed messages, the streaming segment, and each turn's status notes. */
function items() {
  const list = [];
  const messages = model.messages;
  messages.forEach((message, index) => {
    list.push({ key: `m:${message.id ?? index}`, sig: JSON.stringify(message), build: () => messageNode(message) });
    const requestId = message.request_id;
    const next = messages[index + 1];
    if (requestId !== undefined && next?.request_id !== requestId) list.push(...turnTail(requestId));
  });
  return list;
}

function messageNode(message) {
  const node = el('div', `msg ${message.role}${message.partial ? ' partial' : ''}`);
  node.dataset.role = message.role;
  node.dataset.id = message.id ?? '';
  node.dataset.request = message.request_id ?? '';
  if (message.role === 'tool') node.append(el('div', 'label', 'Tool result'));
  node.append(el('div', 'text', message.content));
  if (message.partial) node.append(el('div', 'tag', 'partial — the answer was cut off here'));
  return node;
}

function turnTail(requestId) {
  const tail = [];
  const run = model.runs[requestId] ?? { status: 'unknown' };
  const overlay = model.overlay;
  if (overlay !== null && overlay.requestId === requestId) {
    tail.push({
      key: `o:${overlay.messageId}`,
      sig: `o:${overlay.text}`,
      build: () => {
        const node = el('div', 'msg assistant streaming');
        node.dataset.role = 'assistant';
        node.dataset.id = overlay.messageId;
        node.dataset.request = requestId;
        node.append(el('div', 'text', overlay.text));
        return node;
      },
    });
  }
  let note = null;
  // While the server cannot be reached nothing is known to be answering: say so, never a frozen "Answering…".
  if (run.status === 'running' && phase !== 'live')
    note = ['running paused', 'Waiting for the server — the answer resumes here when it is back.'];
  else if (run.status === 'running') note = ['running', run.tool ? `Running tool ${run.tool}…` : 'Answering…'];
  else if (run.status === 'cancelled' && (run.reason ?? 'server_startup_recovery') === 'server_startup_recovery')
    note = ['interrupted', 'Interrupted by a server restart. Nothing after the partial text above was generated.'];
  else if (run.status === 'cancelled' && run.reason === 'client_cancelled')
    note = ['interrupted', 'Stopped. The text above is what was written before the stop.'];
  else if (run.status === 'cancelled' || run.status === 'interrupted')
    note = ['interrupted', `Interrupted (${run.reason ?? 'no answer was recorded'}).`];
  else if (run.status === 'error') note = ['error', `The model failed: ${run.error ?? 'error'}`];
  if (note !== null)
    tail.push({
      key: `n:${requestId}`,
      sig: note.join(':'),
      build: () => {
        const node = el('div', `note ${note[0]}`, note[1]);
        node.dataset.kind = note[0].split(' ')[0];
        node.dataset.request = requestId;
        return node;
      },
    });
  if (model.missed.includes(requestId))
    tail.push({
      key: `x:${requestId}`,
      sig: 'missed',
      build: () => {
        const node = el('div', 'note missed');
        node.dataset.kind = 'missed';
        node.dataset.request = requestId;
        const text =
          run.status === 'done'
            ? 'You missed this answer — it finished while you were away. '
            : 'You missed the end of this turn — it ended while you were away. ';
        node.append(el('span', '', text));
        const button = el('button', 'ack', 'Got it');
        button.addEventListener('click', () => {
          acked.delete(requestId);
          ack(requestId);
        });
        node.append(button);
        return node;
      },
    });
  return tail;
}

const nodes = new Map(); // key -> { sig, node }

function render() {
  const status = document.getElementById('status');
  status.dataset.state = phase;
  status.textContent = PHASE_TEXT[phase];
  const transcript = document.getElementById('transcript');
  const wanted = items();
  const keep = new Set(wanted.map((item) => item.key));
  for (const [key, entry] of nodes)
    if (!keep.has(key)) {
      entry.node.remove();
      nodes.delete(key);
    }
  let cursor = transcript.firstChild;
  for (const item of wanted) {
    let entry = nodes.get(item.key);
    if (entry === undefined || entry.sig !== item.sig) {
      const node = item.build();
      if (entry !== undefined) {
        if (cursor === entry.node) cursor = node;
        entry.node.replaceWith(node);
      }
      entry = { sig: item.sig, node };
      nodes.set(item.key, entry);
    }
    if (entry.node !== cursor) transcript.insertBefore(entry.node, cursor);
    else cursor = cursor.nextSibling;
  }
  const missed = document.getElementById('missed');
  missed.hidden = model.missed.length === 0;
  missed.textContent = `${model.missed.length} turn${model.missed.length === 1 ? '' : 's'} ended while you were away.`;
  const busy = activeRun() !== undefined;
  document.getElementById('send').disabled = busy && pending === null;
  // Stop cancels the run by id; it needs the connection (a cancel made while not live would wait for it).
  document.getElementById('stop').hidden = !busy || phase !== 'live';
  document.getElementById('notice').textContent =
    pending !== null
      ? 'Sending…'
      : busy && phase !== 'live'
        ? 'Connection lost — reconnecting.'
        : busy
          ? notice || 'The assistant is answering; you can close this tab, it will be here.'
          : notice;
  document.getElementById('session').textContent = sessionId;
}

document.getElementById('composer').addEventListener('submit', onSend);
document.getElementById('stop').addEventListener('click', onStop);
document.getElementById('input').addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey) onSend(event);
});
render();
connect();
