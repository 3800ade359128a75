// The resumable chat page: one WebSocket, seed 003's contract, and the states a user must understand.
// No framework and no build step. The model (fold.js) is the only state; render() draws it.
import { applyRecord, emptyModel, modelFromSnapshot } from './fold.js';

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
let socket = null;
let phase = 'connecting'; // connecting | replaying | live | reconnecting | offline
let attempt = 0;
let reconnectTimer = null;
let reconnectAt = 0;
let saveTimer = null;
let notice = '';
const acked = new Set(); // acks sent on this page (the delivery.ack record confirms them)
const stats = { frames: 0, records: 0, duplicates: 0, gaps: 0, snapshots: 0, connects: 0 };
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
  if (stored?.model?.sessionId === sessionId && Number.isInteger(stored.model.lastSeq)) return stored.model;
  return emptyModel(sessionId);
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

// ---- the connection ------------------------------------------------------------------------------------------------
function connect() {
  clearTimeout(reconnectTimer);
  reconnectTimer = null;
  if (!navigator.onLine) return setPhase('offline');
  const ws = new WebSocket(
    `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws?session=${encodeURIComponent(sessionId)}`,
  );
  socket = ws;
  stats.connects += 1;
  setPhase(attempt === 0 && model.lastSeq === null ? 'connecting' : 'reconnecting');
  ws.onopen = () => {
    if (socket !== ws) return;
    // The epoch travels with the cursor (a model saved before epochs has none to send: the cursor alone then decides).
    ws.send(JSON.stringify({ type: 'hello', sessionId, clientId, lastSeq: model.lastSeq, epoch: model.epoch }));
  };
  ws.onmessage = (event) => {
    if (socket !== ws) return;
    stats.frames += 1;
    onFrame(JSON.parse(event.data));
  };
  ws.onclose = () => {
    if (socket !== ws) return;
    socket = null;
    scheduleReconnect();
  };
}

function dropConnection() {
  const ws = socket;
  socket = null;
  if (ws !== null) ws.close();
}

function scheduleReconnect() {
  if (!navigator.onLine) return setPhase('offline');
  const delay = Math.min(BACKOFF_MAX_MS, BACKOFF_MS * 2 ** attempt) * (0.5 + Math.random() / 2);
  attempt += 1;
  reconnectAt = Date.now() + delay;
  reconnectTimer = setTimeout(connect, delay);
  setPhase('reconnecting');
}

// The browser's own network signal: a lost network does not always close a socket, and waiting for a timeout would
// leave the user staring at a frozen answer. Going offline drops the socket; coming back reconnects at once.
addEventListener('offline', () => {
  clearTimeout(reconnectTimer);
  dropConnection();
  setPhase('offline');
});
addEventListener('online', () => {
  attempt = 0;
  if (socket === null) connect();
});
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible' && socket === null && reconnectTimer !== null) connect();
});

function send(frame) {
  if (socket === null || socket.readyState !== WebSocket.OPEN || phase !== 'live') return false;
  socket.send(JSON.stringify(frame));
  return true;
}

function onFrame(frame) {
  if (typeof frame.seq === 'number') return onRecord(frame);
  switch (frame.type) {
    case 'snapshot':
      if (frame.mode !== 'resume') {
        stats.snapshots += 1;
        model = modelFromSnapshot(frame.payload, frame.runs);
        saveSoon();
      }
      setPhase('replaying');
      break;
    case 'live':
      attempt = 0;
      setPhase('live');
      flushPending();
      break;
    case 'chat.accepted':
      if (pending?.requestId === frame.requestId) clearPending();
      break;
    case 'chat.rejected':
      if (pending?.requestId === frame.requestId) {
        const input = document.getElementById('input');
        if (input.value === '') input.value = pending.content;
        clearPending();
      }
      notice = frame.code === 'run_active' ? 'Wait for the answer to finish before sending.' : frame.message;
      render();
      break;
    case 'error':
      notice = `Server: ${frame.message}`;
      render();
      break;
  }
}

function onRecord(record) {
  stats.records += 1;
  const live = phase === 'live' && document.visibilityState === 'visible';
  const result = applyRecord(model, record, { live, clientId });
  if (result === 'duplicate') {
    stats.duplicates += 1;
    return;
  }
  if (result === 'gap') {
    // Never render around a hole: start over from a full view.
    stats.gaps += 1;
    model = emptyModel(sessionId);
    dropConnection();
    connect();
    return;
  }
  const requestId = record.payload?.request_id;
  // A run that finished while this page watched it is delivered: tell the server (seed 001's phase 2).
  if (live && ['chat.done', 'chat.error', 'chat.cancelled'].includes(record.type)) ack(requestId);
  saveSoon();
  render();
}

function ack(requestId) {
  if (acked.has(requestId)) return;
  if (send({ type: 'ack', requestId, throughSeq: model.lastSeq })) acked.add(requestId);
}

// ---- sending -------------------------------------------------------------------------------------------------------
function clearPending() {
  pending = null;
  localStorage.removeItem(PENDING_KEY);
  render();
}

function flushPending() {
  // Resent even when its chat.started was replayed: the server's answer (created: false) is what confirms it.
  if (pending === null) return;
  send({ type: 'chat.send', requestId: pending.requestId, payload: { content: pending.content } });
}

function onSend(event) {
  event.preventDefault();
  notice = '';
  // A send the server has not confirmed is resent with the same requestId: a double click or a retry after a
  // reconnect is the same turn, never a second one (the server answers created: false).
  if (pending === null) {
    const input = document.getElementById('input');
    const content = input.value.trim();
    if (content === '' || activeRun() !== undefined) return;
    pending = { requestId: newId('r'), content };
    localStorage.setItem(PENDING_KEY, JSON.stringify(pending));
    input.value = '';
  }
  flushPending();
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
  if (run.status === 'running') note = ['running', run.tool ? `Running tool ${run.tool}…` : 'Answering…'];
  else if (run.status === 'cancelled' && (run.reason ?? 'server_startup_recovery') === 'server_startup_recovery')
    note = ['interrupted', 'Interrupted by a server restart. Nothing after the partial text above was generated.'];
  else if (run.status === 'cancelled' || run.status === 'interrupted')
    note = ['interrupted', `Interrupted (${run.reason ?? 'no answer was recorded'}).`];
  else if (run.status === 'error') note = ['error', `The model failed: ${run.error ?? 'error'}`];
  if (note !== null)
    tail.push({
      key: `n:${requestId}`,
      sig: note.join(':'),
      build: () => {
        const node = el('div', `note ${note[0]}`, note[1]);
        node.dataset.kind = note[0];
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
  status.textContent =
    PHASE_TEXT[phase] + (phase === 'reconnecting' && reconnectTimer !== null ? ` (${retryIn()})` : '');
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
  document.getElementById('notice').textContent =
    pending !== null
      ? 'Sending…'
      : busy
        ? 'The assistant is answering; you can close this tab, it will be here.'
        : notice;
  document.getElementById('session').textContent = sessionId;
}

function retryIn() {
  return `${Math.max(0, Math.ceil((reconnectAt - Date.now()) / 1000))} s`;
}

document.getElementById('composer').addEventListener('submit', onSend);
document.getElementById('input').addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey) onSend(event);
});
render();
connect();
