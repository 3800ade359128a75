/**
 * Reconnect replay from a session's event log, as the live figures and probes measure it: the log they replay from
 * (written through the writer), the time from `subscribe({after})` to its first record, and a cold `hub.session`.
 */
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { live } from './live.js';
import { gc, nowMs } from './stats.js';
import { writer } from './writer.js';

type Hub = ReturnType<typeof live.openConversationHub>;
/** An open live session of the build under test. */
export type LiveSession = Awaited<ReturnType<Hub['session']>>;

/** The runs of a generated session log, and where it stops. */
export interface SessionLogShape {
  /** Text of every delta. */
  readonly deltaText: string;
  /** Deltas per run. */
  readonly deltasPerRun: number;
  /** Stop at this many records (the last run cut short to end there) … */
  readonly records?: number;
  /** … or after the run that reaches this many bytes. */
  readonly bytes?: number;
}

/**
 * Writes session `sessionId`'s event log under `root` through the writer (`none` mode, then one flush): finished runs
 * of a user message and `deltasPerRun` deltas, acknowledged, so that opening it recovers nothing. The file is the one
 * the hub opens for the session under `root` (the store layout of spec §4.4).
 */
export async function writeSessionLog(
  root: string,
  sessionId: string,
  shape: SessionLogShape,
): Promise<{ size: number; lastSeq: number }> {
  mkdirSync(join(root, sessionId), { recursive: true });
  const log = await writer.openEventLog({ root, sessionId, durability: 'none', checkpointInterval: 1000 });
  const records = shape.records ?? Number.POSITIVE_INFINITY;
  const bytes = shape.bytes ?? Number.POSITIVE_INFINITY;
  let written = 0;
  for (let r = 0; (log.lastSeq ?? -1) + 1 < records && written < bytes; r += 1) {
    const requestId = `run-${r}`;
    log.chatStarted({ requestId, content: `question ${r}` });
    log.appendMessage({ role: 'user', content: `question ${r}`, id: `${requestId}.user` });
    log.segmentStarted({ requestId, messageId: `${requestId}.a1` });
    const deltas = Math.min(shape.deltasPerRun, Math.max(1, records - (log.lastSeq ?? -1) - 4));
    for (let d = 0; d < deltas; d += 1) log.delta({ requestId, messageId: `${requestId}.a1`, text: shape.deltaText });
    log.chatDone({ requestId });
    const ack = await log.ack(requestId, { clientId: 'bench' });
    written = ack.cursor + ack.length;
  }
  await log.flush();
  const lastSeq = log.lastSeq ?? -1;
  await log.close();
  return { size: statSync(join(root, sessionId, 'events.jsonl')).size, lastSeq };
}

/** Milliseconds from `subscribe({after})` to its first record, which must be `after + 1`. */
export async function firstRecordMs(session: LiveSession, after: number): Promise<number> {
  const begin = nowMs();
  const subscription = session.subscribe({ after });
  const next = await subscription.next();
  const ms = nowMs() - begin;
  subscription.close();
  if (next.done === true || next.value.kind !== 'record' || next.value.record.seq !== after + 1)
    throw new Error(`expected record ${after + 1}, got ${JSON.stringify(next.value).slice(0, 200)}`);
  return ms;
}

/** Milliseconds of `hub.session(sessionId)` on a new hub over `root`: nothing of the session in memory, pages cached. */
export async function coldOpenMs(root: string, sessionId: string): Promise<number> {
  const cold = live.openConversationHub({ root, retention: false });
  try {
    gc();
    const begin = nowMs();
    await cold.session(sessionId);
    return nowMs() - begin;
  } finally {
    await cold.close();
  }
}
