// Token modes across a real crash (spec §18.2, TJ-LIVE-058..061): a server process streams an answer to a WebSocket
// client, which receives every token at once; the process is killed with SIGKILL while two tokens are written
// nowhere; a new process on the same root recovers the session. What the log holds, and what the client receives
// when it reconnects with its cursor, are asserted exactly for each mode.
import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { logLines, tempStore } from './support.js';
import { clientOf, HANG_GUARD_MS, type TestClient } from './websocket/harness.js';

const here = dirname(fileURLToPath(import.meta.url));
const CHILD = join(here, 'fixtures', 'token-server-child.mjs');
const BUILT = join(here, '..', 'dist');

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

interface Server {
  readonly child: ChildProcess;
  readonly port: number;
  /** Resolves when the child printed `line`. */
  said(line: string): Promise<void>;
  readonly exited: Promise<NodeJS.Signals | null>;
}

async function startChild(root: string, mode: string): Promise<Server> {
  const child = spawn(process.execPath, [CHILD, BUILT, root, mode], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const lines: string[] = [];
  const waiters = new Set<() => void>();
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
    lines.push(line);
    for (const wake of [...waiters]) wake();
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_code, signal) => resolve(signal)));
  const said = (what: (line: string) => boolean, label: string) =>
    new Promise<string>((resolve, reject) => {
      const guard = setTimeout(
        () => reject(new Error(`the server never said ${label}; stderr: ${stderr}`)),
        HANG_GUARD_MS,
      );
      const check = (): void => {
        const found = lines.find(what);
        if (found === undefined) return;
        clearTimeout(guard);
        waiters.delete(check);
        resolve(found);
      };
      waiters.add(check);
      check();
    });
  const first = await said((line) => line.startsWith('{"port"'), 'its port');
  const { port } = JSON.parse(first) as { port: number };
  return { child, port, exited, said: async (line) => void (await said((l) => l === line, `"${line}"`)) };
}

async function connect(server: Server): Promise<TestClient> {
  return clientOf(new WebSocket(`ws://127.0.0.1:${server.port}/ws?session=s1`));
}

const records = (client: TestClient) => client.frames.filter((f) => typeof f.seq === 'number');
const tokens = (client: TestClient) => client.frames.filter((f) => f.type === 'token');
/** The token frames' text put together by offset, as a client folds them (TJ-LIVE-061). */
function tokenText(client: TestClient): string {
  let text = '';
  for (const frame of tokens(client)) {
    const offset = frame.offset as number;
    if (offset <= text.length) text = text.slice(0, offset) + (frame.text as string);
  }
  return text;
}
/** A record as the test compares it: type and payload. */
const shape = (record: { readonly type?: unknown; readonly payload?: unknown }) => ({
  type: record.type,
  payload: record.payload,
});

const STARTED = [
  { type: 'chat.started', payload: { request_id: 'r1', content: 'hello' } },
  {
    type: 'message_append',
    payload: { message: { role: 'user', content: 'hello', id: 'r1.user', request_id: 'r1' } },
  },
  { type: 'assistant.segment.started', payload: { request_id: 'r1', message_id: 'r1.a1' } },
];
const delta = (text: string) => ({
  type: 'chat.delta',
  payload: { request_id: 'r1', message_id: 'r1.a1', text },
});
const RECOVERED = [
  {
    type: 'message_append',
    payload: {
      message: { role: 'assistant', content: 'Intro text.\n\n', id: 'r1.a1', request_id: 'r1', partial: true },
    },
  },
  { type: 'chat.cancelled', payload: { request_id: 'r1', reason: 'server_startup_recovery' } },
];

describe.each([
  // durable: every token is a chat.delta; the two after the flush were held in memory and die with the process.
  { mode: 'durable', written: [...STARTED, delta('Intro '), delta('text.\n\n')] },
  // segments: no record per token; the paragraph end wrote the segment's text so far as one chat.delta, the tail none.
  { mode: 'segments', written: [...STARTED, delta('Intro text.\n\n')] },
])('tokens: $mode, SIGKILL mid-answer (TJ-LIVE-058, TJ-LIVE-059, TJ-LIVE-060, TJ-LIVE-061)', ({ mode, written }) => {
  it('the client got every token at once; the log keeps the written text, recovery commits it as partial', async () => {
    const root = tempStore('tj-tokens-');
    const first = await startChild(root, mode);
    const client = await connect(first);
    client.send({ type: 'hello', clientId: 'c1', lastSeq: null });
    await client.waitFor((f) => f.type === 'live', 'live');
    client.send({ type: 'chat.send', requestId: 'r1', payload: { content: 'hello' } });
    await first.said('streamed');
    // Tokens reach the client as produced, durable or not: the two after the flush were never synced.
    await client.waitFor(() => tokenText(client) === 'Intro text.\n\ntail words', 'with every token');
    expect(tokens(client).every((f) => f.requestId === 'r1' && f.messageId === 'r1.a1')).toBe(true);
    first.child.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    await client.closed;

    // On disk: exactly the records written before the kill, and no token after the flush.
    const log = join(root, 's1', 'events.jsonl');
    const before = logLines(log).filter((r) => r.type !== 'checkpoint');
    expect(before.map(shape)).toEqual(written);
    // The client holds only durable records (TJ-LIVE-008): its cursor is the last record on disk.
    const received = records(client);
    const cursor = received.at(-1)?.seq as number;
    expect(received.map(shape)).toEqual(written);
    expect(cursor).toBe(before.at(-1)?.seq);

    // A new process recovers on the first hello; the client resumes from its cursor.
    const second = await startChild(root, mode);
    const again = await connect(second);
    again.send({ type: 'hello', clientId: 'c1', lastSeq: cursor, epoch: received[0]?.epoch ?? null });
    await again.waitFor((f) => f.type === 'live', 'live');
    // It receives the recovery's records after its cursor, once, in order: the written text as a partial message,
    // which replaces the tokens it showed (TJ-LIVE-061), then the run's end. No token: no run is open.
    expect(records(again).map(shape)).toEqual(RECOVERED);
    expect(records(again)[0]?.seq).toBe(cursor + 1);
    expect(tokens(again)).toEqual([]);
    const after = logLines(log).filter((r) => r.type !== 'checkpoint');
    expect(after.map(shape)).toEqual([...written, ...RECOVERED]);
    again.close();
    await again.closed;
    second.child.kill('SIGKILL');
    await second.exited;
  });
});
