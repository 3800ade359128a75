import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { AdapterProcess } from '../../process.js';
import { freshDir } from '../fresh-dir.js';
import type { Outcome } from '../record.js';
import { expectOk, expectRefused } from './answers.js';
import type { WriterContext } from './context.js';
import { claimsFeature } from './support.js';

// What the checks of feature `live` share: the session they drive, a client of it over the adapter protocol, and the
// event-log lines the harness writes for a session to open on.

export const SESSION = 's1';
export const turnJournalOf = (root: string) => join(root, '_turn_journal', `${SESSION}.jsonl`);
export const eventLogOf = (root: string) => join(root, SESSION, 'events.jsonl');
export type Json = Record<string, unknown>;

/**
 * Runs one live check in a fresh store: skipped unless feature `live` and the turn and event families are claimed.
 * `body` answers its failures, or an outcome of its own (a skip: the adapter lacks a capability the check needs).
 */
export async function inFreshStore(
  context: WriterContext,
  body: (root: string) => Promise<string[] | Outcome>,
): Promise<Outcome> {
  if (!claimsFeature(context.claims, 'live')) return { skip: 'feature live not claimed' };
  for (const family of ['turn', 'event'] as const)
    if (!context.claims.families.includes(family)) return { skip: `family ${family} not claimed` };
  const root = freshDir('tj-conf-live-');
  try {
    const outcome = await body(root);
    return Array.isArray(outcome) ? { failures: outcome } : outcome;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** A client of one adapter's live session `s1` in `root`. */
export function liveClient(process: AdapterProcess, root: string, failures: string[]) {
  const at = { root, session_id: SESSION };
  return {
    at,
    ok: (op: string, params: Json, what: string) => expectOk(process, op, { ...at, ...params }, what, failures),
    step: (requestId: string, step: string, params: Json = {}) =>
      expectOk(process, 'live_step', { ...at, request_id: requestId, step, ...params }, `live_step ${step}`, failures),
    refused: (file: string, op: string, params: Json, why: string, code: 'refused' | 'bad_request' = 'refused') =>
      expectRefused(process, file, op, { ...at, ...params }, why, failures, code),
    seqs: async (after: number, extra: Json = {}) => {
      const answer = await expectOk(
        process,
        'live_subscribe',
        { ...at, after, ...extra },
        `subscribe after ${after}`,
        failures,
      );
      return (answer?.events ?? []) as Json[];
    },
  };
}

/** A run the worker streams: a segment, a tool call with its result, a second segment, `done`. */
export async function streamRun(client: ReturnType<typeof liveClient>, requestId: string): Promise<void> {
  await client.step(requestId, 'delta', { text: 'Hel' });
  await client.step(requestId, 'delta', { text: 'lo' });
  await client.step(requestId, 'tool_start', { tool_call_id: 'c1', tool: 'search' });
  await client.step(requestId, 'tool_end', { tool_call_id: 'c1' });
  await client.step(requestId, 'tool_result', { tool_call_id: 'c1', output: 'found' });
  await client.step(requestId, 'delta', { text: ' world' });
  await client.step(requestId, 'done');
}

export const isFinishing = (type: unknown) =>
  type === 'chat.done' || type === 'chat.error' || type === 'chat.cancelled';
export const messageOf = (record: Json) => ((record.payload as Json | undefined)?.message ?? {}) as Json;
export const payloadOf = (record: Json) => (record.payload ?? {}) as Json;

/** The seqs of `events` as the harness expects them listed: `{seq}` records and `{snapshot, last_seq}` events. */
export const describe = (events: readonly Json[]) =>
  events.map((e) =>
    'seq' in e
      ? String(e.seq)
      : 'snapshot' in e
        ? `${String(e.snapshot)}@${String(e.last_seq)}`
        : `cut_off@${String(e.cut_off)}`,
  );

export function expectEvents(
  events: readonly Json[],
  expected: readonly string[],
  what: string,
  failures: string[],
): void {
  const got = describe(events);
  if (JSON.stringify(got) !== JSON.stringify(expected))
    failures.push(`${what}: the subscription yielded [${got.join(' ')}], not [${expected.join(' ')}]`);
}

export const range = (from: number, through: number) =>
  Array.from({ length: Math.max(0, through - from + 1) }, (_, i) => String(from + i));

/** An event-log record as a writer would have written it. */
export const eventLine = (seq: number, type: string, payload: Json, ts = '2026-06-19T03:14:07Z') =>
  JSON.stringify({ seq, ts, type, payload });

/** The records of one finished run `requestId` from `seq` on, with `ts`; seqs `seq`..`seq + 4`. */
export function finishedRun(seq: number, requestId: string, ts: string): string[] {
  return [
    eventLine(seq, 'chat.started', { request_id: requestId, content: 'hi' }, ts),
    eventLine(
      seq + 1,
      'message_append',
      { message: { role: 'user', content: 'hi', id: `${requestId}.user`, request_id: requestId } },
      ts,
    ),
    eventLine(seq + 2, 'assistant.segment.started', { request_id: requestId, message_id: `${requestId}.a1` }, ts),
    eventLine(
      seq + 3,
      'message_append',
      { message: { role: 'assistant', content: 'ok', id: `${requestId}.a1`, request_id: requestId } },
      ts,
    ),
    eventLine(seq + 4, 'chat.done', { request_id: requestId }, ts),
  ];
}

/** Writes `lines` as `file`, with its directory. */
export function writeLines(file: string, lines: readonly string[]): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${lines.join('\n')}\n`);
}

export const turnLine = (event: string, turnId: string, extra: Json = {}) =>
  JSON.stringify({ version: 1, event, turn_id: turnId, created_at: 1_781_000_000, ...extra });
