// A server developer's bad day: a call the log refuses — a client's malformed ack, a worker's error object that JSON
// cannot carry, a request with an invalid model, an answer longer than a line — must reject that call, write nothing
// of it, and leave the session usable. Before, such a refusal was dropped: the call resolved as if written (an ack, a
// finishing record that never reached the log), the writer's rejection went unhandled (which ends a Node process), or
// the whole session was failed for one bad request.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LiveError, openConversationHub } from '@turnjournal/live';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type LogLine, logLines } from './support.js';

const dirs: string[] = [];
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => {
  unhandled.push(reason);
};
beforeEach(() => {
  unhandled.length = 0;
  process.on('unhandledRejection', onUnhandled);
});
afterEach(() => {
  process.off('unhandledRejection', onUnhandled);
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The records of session s1's event log, checkpoints left out. */
function lines(root: string): LogLine[] {
  return logLines(join(root, 's1', 'events.jsonl')).filter((record) => record.type !== 'checkpoint');
}

/** Lets pending rejections surface as `unhandledRejection` before the test looks. */
async function settle(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 20));
}

async function openSession() {
  const root = mkdtempSync(join(tmpdir(), 'tj-live-refused-'));
  dirs.push(root);
  const hub = openConversationHub({ root, retention: false });
  const session = await hub.session('s1');
  return { root, hub, session };
}

async function startedRun(requestId = 'r1') {
  const opened = await openSession();
  const sent = await opened.session.send({ requestId, content: 'hi' });
  if (!sent.created) throw new Error('expected a new run');
  return { ...opened, run: sent.run };
}

describe('ack with a malformed throughSeq or clientId (TJ-LIVE-014)', () => {
  it('rejects, writes no delivery.ack, leaves nothing unhandled, and a valid ack still works', async () => {
    const { root, hub, session, run } = await startedRun();
    await run.done();
    const bad: Record<string, unknown>[] = [
      { throughSeq: Number.NaN },
      { throughSeq: '99' },
      { throughSeq: 2.5 },
      { throughSeq: Number.POSITIVE_INFINITY },
      { clientId: 5 },
    ];
    for (const options of bad)
      await expect(session.ack('r1', options as never), JSON.stringify(options)).rejects.toMatchObject({
        code: 'invalid_request',
      });
    await session.flush();
    await settle();
    expect(unhandled).toEqual([]);
    expect(lines(root).filter((r) => r.type === 'delivery.ack')).toEqual([]);
    expect(session.snapshot().undelivered.map((u) => u.requestId)).toEqual(['r1']);
    await session.ack('r1', { clientId: 'c1', throughSeq: session.durableSeq });
    expect(lines(root).filter((r) => r.type === 'delivery.ack')).toHaveLength(1);
    await hub.close();
  });
});

describe('ack with a throughSeq beyond the last durable record (TJ-LIVE-014)', () => {
  it('rejects with ack_beyond_log, writes nothing, and the session stays usable', async () => {
    const { root, hub, session, run } = await startedRun();
    await run.done();
    const last = session.durableSeq;
    for (const throughSeq of [last + 1, last + 1000, Number.MAX_SAFE_INTEGER]) {
      const refused = await session.ack('r1', { clientId: 'c1', throughSeq }).catch((e: unknown) => e);
      expect(refused, String(throughSeq)).toBeInstanceOf(LiveError);
      expect((refused as LiveError).code).toBe('ack_beyond_log');
      expect((refused as LiveError).message).toContain(`through_seq ${throughSeq}`);
    }
    await session.flush();
    await settle();
    expect(unhandled).toEqual([]);
    expect(lines(root).filter((r) => r.type === 'delivery.ack')).toEqual([]);
    expect(session.durableSeq).toBe(last);
    expect(session.snapshot({ clientId: 'c1' }).undelivered.map((u) => u.requestId)).toEqual(['r1']);
    // The bound is the last durable record itself: an ack through it is the normal case.
    await session.ack('r1', { clientId: 'c1', throughSeq: last });
    expect(
      lines(root)
        .filter((r) => r.type === 'delivery.ack')
        .map((r) => r.payload.through_seq),
    ).toEqual([last]);
    const next = await session.send({ requestId: 'r2', content: 'again' });
    expect(next.created).toBe(true);
    await hub.close();
  });
});

describe('a finishing record the log refuses (TJ-LIVE-005, TJ-LIVE-006)', () => {
  it('rejects error() with an invalid error object and keeps the run active until a valid end', async () => {
    const { root, hub, session, run } = await startedRun();
    await run.delta('partial answer');
    await expect(run.error({ message: 5 } as never)).rejects.toMatchObject({ code: 'invalid_record' });
    await expect(run.cancel(7 as never)).rejects.toMatchObject({ code: 'invalid_record' });
    await settle();
    expect(unhandled).toEqual([]);
    // The run is still the session's and the log's active run: nothing claimed it finished.
    expect(session.activeRequestId).toBe('r1');
    expect(session.snapshot().activeRun?.requestId).toBe('r1');
    await run.error({ message: 'the model failed' });
    const finishing = lines(root).filter((r) => r.type.startsWith('chat.') && r.type !== 'chat.started');
    expect(finishing.filter((r) => r.type !== 'chat.delta').map((r) => r.type)).toEqual(['chat.error']);
    // The partial text was committed once, as partial (TJ-LIVE-004).
    const assistant = session.snapshot().messages.filter((m) => m.role === 'assistant');
    expect(assistant.map((m) => [m.content, (m as { partial?: boolean }).partial])).toEqual([['partial answer', true]]);
    // The next turn starts normally.
    const next = await session.send({ requestId: 'r2', content: 'again' });
    if (!next.created) throw new Error('expected a new run');
    await next.run.delta('ok');
    await next.run.done();
    expect(session.statusOf('r2')).toBe('done');
    await hub.close();
  });
});

describe('send with an input the turn journal refuses (TJ-LIVE-003)', () => {
  it('rejects that send only: the session stays usable for the next request', async () => {
    const { root, hub, session } = await openSession();
    await expect(session.send({ requestId: 'r1', content: 'c', model: 5 as never })).rejects.toMatchObject({
      code: 'invalid_record',
    });
    const sent = await session.send({ requestId: 'r2', content: 'c' });
    expect(sent.created).toBe(true);
    if (sent.created) await sent.run.done();
    expect(
      lines(root)
        .filter((r) => r.type === 'chat.started')
        .map((r) => r.payload.request_id),
    ).toEqual(['r2']);
    await hub.close();
  });
});

describe('send with a content the turn journal takes and the event log cannot (TJ-LIVE-003)', () => {
  const MAX_LINE = 16 * 1024 * 1024; // the writer's default line limit, which both journals of the hub use

  it('refuses it before anything is written, in either journal', async () => {
    const { root, hub, session } = await openSession();
    // The user message's line is about ten bytes longer around its content than the `submitted` line: this content
    // fits the one and not the other (the lines' fixed parts are about 140 bytes).
    const content = 'x'.repeat(MAX_LINE - 145);
    await expect(session.send({ requestId: 'r1', content })).rejects.toMatchObject({ code: 'line_too_long' });
    await settle();
    expect(unhandled).toEqual([]);
    expect(session.statusOf('r1')).toBeUndefined();
    const sent = await session.send({ requestId: 'r2', content: 'c' });
    expect(sent.created).toBe(true);
    if (sent.created) await sent.run.done();
    expect(
      lines(root)
        .filter((r) => r.type === 'chat.started')
        .map((r) => r.payload.request_id),
    ).toEqual(['r2']);
    const turns = readFileSync(join(root, '_turn_journal', 's1.jsonl'), 'utf8');
    expect(turns).not.toContain('"turn_id":"r1"');
    await hub.close();
  }, 20_000);
});

/** Sends `chunk` as a delta up to `max` times, until one is refused: how many were accepted, and the refusal. */
async function deltasUntilRefused(
  run: { delta(text: string): Promise<void> },
  chunk: string,
  max: number,
): Promise<{ accepted: number; refusal: unknown }> {
  for (let accepted = 0; accepted < max; accepted += 1) {
    try {
      await run.delta(chunk);
    } catch (refusal) {
      return { accepted, refusal };
    }
  }
  return { accepted: max, refusal: undefined };
}

describe('an assistant segment longer than a line (TJ-LIVE-004)', () => {
  const MAX_LINE = 16 * 1024 * 1024; // the writer's default line limit, which the hub's event logs use

  it('refuses the delta that would make the segment’s message too long, and commits the text accepted', async () => {
    const { root, hub, session, run } = await startedRun();
    const chunk = 'a'.repeat(1024 * 1024);
    const { accepted, refusal } = await deltasUntilRefused(run, chunk, 17);
    expect(refusal).toMatchObject({ code: 'line_too_long' });
    // 15 MiB and the message's members fit in 16 MiB; 16 MiB of text does not.
    expect(accepted).toBe(15);
    // What is left of the line still takes a small delta: the refusal changed nothing.
    await run.delta('tail');
    const text = accepted * chunk.length + 'tail'.length;
    await run.done();
    await settle();
    expect(unhandled).toEqual([]);
    const assistant = session.snapshot().messages.filter((m) => m.role === 'assistant');
    expect(assistant.map((m) => (m.content as string).length)).toEqual([text]);
    const appended = lines(root).filter(
      (r) => r.type === 'message_append' && (r.payload.message as { role: string }).role === 'assistant',
    );
    expect(appended.map((r) => ((r.payload.message as { content: string }).content as string).length)).toEqual([text]);
    expect(JSON.stringify(appended[0]).length).toBeLessThanOrEqual(MAX_LINE);
    await hub.close();
  }, 20_000);

  // The log escapes U+2028 and U+2029 (TJ-FRAME-007): six bytes each in the line, where JSON.stringify leaves them as
  // three. Counted as three, a segment of them passed the bound at twice what its message can hold, and the message
  // was refused when the segment closed: the answer lost from the view.
  it('counts a line separator as the six bytes the log writes for it', async () => {
    const { hub, session, run } = await startedRun();
    const chunk = '\u2028'.repeat(512 * 1024); // 3 MiB in the line
    const { accepted, refusal } = await deltasUntilRefused(run, chunk, 12);
    expect(refusal).toMatchObject({ code: 'line_too_long' });
    expect(accepted).toBe(5);
    await run.done();
    await settle();
    expect(unhandled).toEqual([]);
    const assistant = session.snapshot().messages.filter((m) => m.role === 'assistant');
    expect(assistant.map((m) => (m.content as string).length)).toEqual([accepted * chunk.length]);
    await hub.close();
  }, 20_000);
});
