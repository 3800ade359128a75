#!/usr/bin/env node
// Load test of the resumable chat: N simulated clients (WebSocket, no browser) on 127.0.0.1 share a few sessions,
// send turns and drop/reconnect at random for a bounded time, then stop by themselves. Reports p50/p99 of
// reconnect -> first replayed record, and checks that every client ended with exactly the committed transcript
// (the message_append records of the session's event log on disk), with no gap and no duplicate on the way.
//
//   node examples/resumable-chat/test/load.mjs [--clients 40] [--sessions 8] [--seconds 15] [--token-ms 5] [--seed 1]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { applyRecord, emptyModel, modelFromSnapshot } from '../public/fold.js';

const EXAMPLE = join(dirname(fileURLToPath(import.meta.url)), '..');
const LIMITS = { clients: 500, sessions: 100, seconds: 120 };

/** A small seeded PRNG (mulberry32): the schedule of sends and drops is the same for a seed. */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function startServer(root, tokenMs) {
  const child = spawn(
    process.execPath,
    [
      join(EXAMPLE, 'server.mjs'),
      '--root',
      root,
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--token-ms',
      String(tokenMs),
      '--test-hooks',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const url = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      try {
        const entry = JSON.parse(line);
        if (entry.event === 'listening') resolve(entry.url);
      } catch {}
    });
    child.once('exit', (code) => reject(new Error(`server exited ${code}`)));
  });
  return { child, url };
}

/** One simulated tab: the page's protocol (hello with its cursor, fold, acks of live finishes, idempotent sends). */
class SimClient {
  constructor({ index, sessionId, url, random, stats }) {
    this.index = index;
    this.sessionId = sessionId;
    this.clientId = `load-client-${index}`;
    this.url = `${url.replace(/^http/, 'ws')}ws`;
    this.random = random;
    this.stats = stats;
    this.model = emptyModel(sessionId);
    this.socket = null;
    this.live = false;
    this.reconnectStarted = 0;
    this.waitingReplay = false;
    this.sent = 0;
    this.waiters = [];
  }

  connect() {
    this.live = false;
    this.reconnectStarted = performance.now();
    const socket = new WebSocket(`${this.url}?session=${encodeURIComponent(this.sessionId)}`);
    this.socket = socket;
    this.stats.connects += 1;
    socket.on('open', () =>
      socket.send(
        JSON.stringify({
          type: 'hello',
          sessionId: this.sessionId,
          clientId: this.clientId,
          lastSeq: this.model.lastSeq,
        }),
      ),
    );
    socket.on('message', (data) => {
      if (this.socket === socket) this.onFrame(JSON.parse(String(data)));
    });
    socket.on('close', () => {
      if (this.socket === socket) {
        this.socket = null;
        this.live = false;
      }
    });
    socket.on('error', () => undefined);
  }

  drop() {
    const socket = this.socket;
    this.socket = null;
    this.live = false;
    this.stats.drops += 1;
    socket?.terminate();
  }

  onFrame(frame) {
    if (typeof frame.seq === 'number') {
      if (this.waitingReplay) {
        this.waitingReplay = false;
        this.stats.latencies.push(performance.now() - this.reconnectStarted);
      }
      const result = applyRecord(this.model, frame, { live: this.live, clientId: this.clientId });
      if (result === 'gap') this.stats.gaps += 1;
      if (result === 'duplicate') this.stats.duplicates += 1;
      if (this.live && frame.type in { 'chat.done': 1, 'chat.error': 1, 'chat.cancelled': 1 })
        this.socket?.send(JSON.stringify({ type: 'ack', requestId: frame.payload.request_id, throughSeq: frame.seq }));
    } else if (frame.type === 'snapshot') {
      if (frame.mode === 'resume') this.waitingReplay = frame.head > frame.after;
      else {
        this.stats.snapshots += 1;
        this.model = modelFromSnapshot(frame.payload, frame.runs);
      }
    } else if (frame.type === 'live') this.live = true;
    else if (frame.type === 'chat.accepted') this.stats.accepted += 1;
    else if (frame.type === 'chat.rejected')
      this.stats.rejected[frame.code] = (this.stats.rejected[frame.code] ?? 0) + 1;
    else if (frame.type === 'error') this.stats.errors.push(frame.message);
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  trySend() {
    if (!this.live || Object.values(this.model.runs).some((run) => run.status === 'running')) return;
    this.sent += 1;
    const requestId = `r-${this.index}-${this.sent}`;
    this.socket.send(JSON.stringify({ type: 'chat.send', requestId, payload: { content: `load ${requestId}` } }));
  }

  /** Resolves when this client has folded every record through `seq`. */
  async reach(seq) {
    while (this.model.lastSeq === null || this.model.lastSeq < seq)
      await new Promise((resolve) => this.waiters.push(resolve));
  }
}

/** Runs the load test; resolves to its report. */
export async function runLoad(options = {}) {
  const clients = Math.min(options.clients ?? 40, LIMITS.clients);
  const sessions = Math.min(options.sessions ?? 8, LIMITS.sessions, clients);
  const seconds = Math.min(options.seconds ?? 15, LIMITS.seconds);
  const random = prng(options.seed ?? 1);
  const root = mkdtempSync(join(tmpdir(), 'tj-chat-load-'));
  const server = await startServer(root, options.tokenMs ?? 5);
  const hardStop = setTimeout(
    () => {
      server.child.kill('SIGKILL');
      console.error('load test: hard time limit reached');
      process.exit(3);
    },
    (seconds + 90) * 1000,
  );
  const stats = {
    connects: 0,
    drops: 0,
    accepted: 0,
    rejected: {},
    snapshots: 0,
    gaps: 0,
    duplicates: 0,
    errors: [],
    latencies: [],
  };
  try {
    const sims = Array.from(
      { length: clients },
      (_, index) => new SimClient({ index, sessionId: `load-${index % sessions}`, url: server.url, random, stats }),
    );
    for (const sim of sims) sim.connect();
    // The random phase: every 20 ms, each client may send, drop, or come back.
    const end = Date.now() + seconds * 1000;
    while (Date.now() < end) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      for (const sim of sims) {
        const roll = random();
        if (sim.socket === null) {
          if (roll < 0.2) sim.connect();
        } else if (roll < 0.01) sim.drop();
        else if (roll < 0.03) sim.trySend();
      }
    }
    // Settle: everyone back, every answer finished, every client at its session's last durable record.
    for (const sim of sims) if (sim.socket === null) sim.connect();
    await fetch(new URL('/test/idle', server.url), { method: 'POST' });
    const mismatches = [];
    for (let s = 0; s < sessions; s++) {
      const sessionId = `load-${s}`;
      const records = readRecords(root, sessionId);
      const lastSeq = records.at(-1)?.seq ?? -1;
      const committed = JSON.stringify(
        records.filter((r) => r.type === 'message_append').map((r) => r.payload.message),
      );
      for (const sim of sims.filter((c) => c.sessionId === sessionId)) {
        await sim.reach(lastSeq);
        if (JSON.stringify(sim.model.messages) !== committed || sim.model.overlay !== null)
          mismatches.push(sim.clientId);
      }
    }
    for (const sim of sims) sim.socket?.close();
    const sorted = [...stats.latencies].sort((a, b) => a - b);
    const turns = sims.reduce((n, sim) => n + sim.sent, 0);
    return {
      clients,
      sessions,
      seconds,
      sendsAttempted: turns,
      accepted: stats.accepted,
      rejected: stats.rejected,
      drops: stats.drops,
      connects: stats.connects,
      replays: sorted.length,
      p50Ms: round(percentile(sorted, 50)),
      p99Ms: round(percentile(sorted, 99)),
      maxMs: round(sorted.at(-1) ?? null),
      gaps: stats.gaps,
      duplicates: stats.duplicates,
      fullSnapshots: stats.snapshots,
      errors: stats.errors.slice(0, 5),
      mismatches,
      root,
    };
  } finally {
    clearTimeout(hardStop);
    server.child.kill('SIGTERM');
    await new Promise((resolve) => server.child.once('exit', resolve));
    if (options.keep !== true) rmSync(root, { recursive: true, force: true });
  }
}

function readRecords(root, sessionId) {
  let text;
  try {
    text = readFileSync(join(root, sessionId, 'events.jsonl'), 'utf8');
  } catch {
    return [];
  }
  // The NUL bytes that end a log the hub holds open are its pre-allocated space (spec §3.8), not a line.
  return text
    .replace(/\0+$/, '')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line));
}

function round(value) {
  return value === null ? null : Math.round(value * 10) / 10;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      clients: { type: 'string', default: '40' },
      sessions: { type: 'string', default: '8' },
      seconds: { type: 'string', default: '15' },
      'token-ms': { type: 'string', default: '5' },
      seed: { type: 'string', default: '1' },
    },
  });
  const report = await runLoad({
    clients: Number(values.clients),
    sessions: Number(values.sessions),
    seconds: Number(values.seconds),
    tokenMs: Number(values['token-ms']),
    seed: Number(values.seed),
  });
  console.log(JSON.stringify(report, null, 2));
  process.exit(report.mismatches.length === 0 && report.gaps === 0 && report.duplicates === 0 ? 0 : 1);
}
