// Two app servers on one PostgreSQL database, as behind a load balancer (issue 36): real processes, each a live hub
// served over SSE. A client that moves from one host to the other mid-answer receives exactly the rest; a host killed
// mid-answer leaves its run to the other, which closes it as interrupted and keeps the partial text.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { type PostgresServer, startPostgres } from '@turnjournal/test-support/postgres-server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

/** Hang guard of a wait: far above the quiet duration of each step (well under a second). */
const WAIT_MS = 60_000;
const hostScript = fileURLToPath(new URL('./support/app-host.mjs', import.meta.url));

let server: PostgresServer;
beforeAll(() => {
  server = startPostgres();
});
afterAll(() => server?.stop());

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

interface Host {
  readonly child: ChildProcess;
  readonly url: string;
}

/** Starts an app server process; resolves once it listens. */
function startHost(store: string, tokens: number, pauseMs: number): Promise<Host> {
  const child = spawn(process.execPath, [hostScript, server.connectionString, store, String(tokens), String(pauseMs)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    errors += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    const guard = setTimeout(() => reject(new Error(`the host did not start: ${errors}`)), WAIT_MS);
    child.stdout?.on('data', (chunk: Buffer) => {
      const port = /listening (\d+)/.exec(chunk.toString())?.[1];
      if (port === undefined) return;
      clearTimeout(guard);
      resolve({ child, url: `http://127.0.0.1:${port}/sse` });
    });
    child.on('exit', (code) => reject(new Error(`the host exited (${code}) before listening: ${errors}`)));
  });
}

/** One SSE event of a stream: its id (a record's seq) and its frame (a record has a `seq`; others do not). */
interface SseEvent {
  readonly id: number | undefined;
  readonly frame: Record<string, unknown>;
}

/**
 * Opens the event stream of a session on a host (resolves once the host answered the GET, so that nothing sent after
 * it is missed), read event by event.
 */
async function events(host: Host, session: string, lastEventId?: number): Promise<AsyncGenerator<SseEvent>> {
  const response = await fetch(`${host.url}?session=${session}&clientId=tab-1`, {
    headers: lastEventId === undefined ? {} : { 'Last-Event-ID': String(lastEventId) },
  });
  if (response.status !== 200 || response.body === null) throw new Error(`GET answered ${response.status}`);
  return parse(response.body as unknown as AsyncIterable<Uint8Array>);
}

async function* parse(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of body) {
    buffered += decoder.decode(chunk, { stream: true });
    for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
      const text = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const id = /^id: (-?\d+)$/m.exec(text)?.[1];
      const data = /^data: (.*)$/m.exec(text)?.[1];
      if (data !== undefined) yield { id: id === undefined ? undefined : Number(id), frame: JSON.parse(data) };
    }
  }
}

async function send(host: Host, session: string, requestId: string): Promise<void> {
  const response = await fetch(`${host.url}?session=${session}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'chat.send', requestId, payload: { content: 'go on' }, clientId: 'tab-1' }),
  });
  const reply = (await response.json()) as { type?: string };
  if (reply.type !== 'chat.accepted') throw new Error(`the send was answered ${JSON.stringify(reply)}`);
}

/** The records of a stream, from its first record on, until `stop` says so; a hang guard ends a stuck wait. */
async function recordsUntil(
  stream: AsyncGenerator<SseEvent>,
  stop: (record: Record<string, unknown>) => boolean,
): Promise<Record<string, unknown>[]> {
  const records: Record<string, unknown>[] = [];
  const guard = setTimeout(() => void stream.return(undefined), WAIT_MS);
  try {
    for await (const { frame } of stream) {
      if (typeof frame.seq !== 'number') continue;
      records.push(frame);
      if (stop(frame)) break;
    }
  } finally {
    clearTimeout(guard);
    await stream.return(undefined);
  }
  return records;
}

const typeOf = (record: Record<string, unknown>) => record.type as string;
const seqOf = (record: Record<string, unknown>) => record.seq as number;
const textOf = (records: readonly Record<string, unknown>[]) =>
  records
    .filter((record) => typeOf(record) === 'chat.delta')
    .map((record) => (record.payload as { text: string }).text)
    .join('');
const ends = (requestId: string) => (record: Record<string, unknown>) =>
  ['chat.done', 'chat.error', 'chat.cancelled'].includes(typeOf(record)) &&
  (record.payload as { request_id?: unknown }).request_id === requestId;

/** Stops at the delta of token `n`. */
const token = (n: number) => (record: Record<string, unknown>) =>
  typeOf(record) === 'chat.delta' && textOf([record]) === `t${n} `;

/**
 * The records a client received from the first host then the second, checked gap-free: the stream opened before the
 * send, so it starts at the run's first record (seq 0), and every seq follows the one before it.
 */
function gapFreeFromTheRun(
  before: readonly Record<string, unknown>[],
  after: readonly Record<string, unknown>[],
): Record<string, unknown>[] {
  const all = [...before, ...after];
  const seqs = all.map(seqOf);
  expect(seqs[0], 'the run’s first record').toBe(0);
  expect(
    seqs.slice(1).every((seq, i) => seq === (seqs[i] as number) + 1),
    'contiguous seqs across hosts',
  ).toBe(true);
  return all;
}

describe('two app servers on one database, behind a load balancer (issue 36)', () => {
  it('a client that moves from host A to host B mid-answer receives exactly the rest, gap-free', {
    timeout: 3 * WAIT_MS,
  }, async () => {
    const [a, b] = [await startHost('balanced', 200, 3), await startHost('balanced', 200, 3)];
    const fromA = await events(a, 's1');
    await send(a, 's1', 'r1');
    const before = await recordsUntil(fromA, token(40));
    const cursor = seqOf(before.at(-1) as Record<string, unknown>);
    const after = await recordsUntil(await events(b, 's1', cursor), ends('r1'));
    const all = gapFreeFromTheRun(before, after);
    expect(textOf(all)).toBe(Array.from({ length: 200 }, (_, n) => `t${n} `).join(''));
    expect(typeOf(all.at(-1) as Record<string, unknown>)).toBe('chat.done');
  });

  it('host A killed mid-answer: host B takes the session over and closes the run as interrupted, the partial text kept', {
    timeout: 3 * WAIT_MS,
  }, async () => {
    const [a, b] = [await startHost('killed', 10_000, 5), await startHost('killed', 10_000, 5)];
    const fromA = await events(a, 's2');
    await send(a, 's2', 'r2');
    const before = await recordsUntil(fromA, token(30));
    a.child.kill('SIGKILL');
    await new Promise((resolve) => a.child.once('exit', resolve));
    const cursor = seqOf(before.at(-1) as Record<string, unknown>);
    const after = await recordsUntil(await events(b, 's2', cursor), ends('r2'));
    const all = gapFreeFromTheRun(before, after);
    const last = all.at(-1) as Record<string, unknown>;
    expect(typeOf(last), 'host B ends the run host A left').not.toBe('chat.done');
    expect(JSON.stringify(last.payload)).toMatch(/server_startup_recovery/);
    // Every token A wrote before it died is there, in order, and nothing after the last one it wrote.
    const text = textOf(all);
    const tokens = text.trim().split(' ');
    expect(tokens.length).toBeGreaterThanOrEqual(31);
    expect(tokens).toEqual(Array.from({ length: tokens.length }, (_, n) => `t${n}`));
  });
});
