// A caller's tool result goes into two records the hub builds, `tool.result` and its `message_append` (TJ-LIVE-004).
// The writer encodes JSON-clean records without parsing their lines back (writer: src/append/json-copy.ts); whatever
// a caller hands over, what the log holds, what subscribers receive and what the snapshot shows must be the same
// value, and a value JSON would turn into an invalid record is refused with nothing of it written (TJ-COMPAT-018).
import { join } from 'node:path';
import { type LiveRecord, openConversationHub } from '@turnjournal/live';
import { describe, expect, it } from 'vitest';
import { logLines, take, tempStore } from './support.js';

/** A hub on a fresh directory, session `s1`, and a new run `r1` whose start is durable. */
async function startedRun() {
  const root = tempStore('tj-live-values-');
  const hub = openConversationHub({ root, retention: false });
  const session = await hub.session('s1');
  const sent = await session.send({ requestId: 'r1', content: 'hi' });
  if (!sent.created) throw new Error('expected a new run');
  await session.flush();
  return { root, hub, session, sent };
}

describe('a caller’s values in toolResult (TJ-COMPAT-018, TJ-LIVE-004)', () => {
  it('refuses what JSON would make invalid, writes nothing of it, and keeps the session usable', async () => {
    const { root, hub, session, sent } = await startedRun();
    const file = join(root, 's1', 'events.jsonl');
    const before = logLines(file).length;
    const refused: unknown[] = [undefined, Number.NaN, 42, { toJSON: () => undefined }, Symbol('s')];
    for (const output of refused)
      await expect(
        sent.run.toolResult({ toolCallId: 'bad', output: output as string }),
        String(typeof output),
      ).rejects.toMatchObject({ code: 'invalid_record' });
    await session.flush();
    expect(logLines(file)).toHaveLength(before);
    expect(session.snapshot().messages.filter((m) => m.role === 'tool')).toHaveLength(0);
    // A toolCallId JSON drops is refused too.
    await expect(
      sent.run.toolResult({ toolCallId: undefined as unknown as string, output: 'x' }),
    ).rejects.toMatchObject({ code: 'invalid_record' });
    await sent.run.toolResult({ toolCallId: 'ok', output: 'fine' });
    await sent.run.done();
    await hub.close();
  });

  it('writes, delivers and shows the same value as the line holds, for clean and replaced values alike', async () => {
    const { root, hub, session, sent } = await startedRun();
    const subscription = session.subscribe({ after: session.durableSeq });
    const outputs: unknown[] = [
      'plain',
      'line\u2028separator and a lone \ud800 surrogate',
      { toJSON: () => 'from toJSON' },
      Object.defineProperty({}, 'toJSON', { value: () => 'hidden toJSON', enumerable: false }),
    ];
    for (const [i, output] of outputs.entries())
      await sent.run.toolResult({ toolCallId: `c${i}`, output: output as string });
    const delivered = (await take(subscription, outputs.length * 2)).flatMap((e) =>
      e.kind === 'record' ? [e.record] : [],
    ) as LiveRecord[];
    subscription.close();
    await session.flush();
    const file = join(root, 's1', 'events.jsonl');
    const onDisk = logLines(file).filter((r) => typeof r.seq === 'number' && r.seq > (delivered[0]?.seq ?? 0) - 1);
    const expected = ['plain', 'line\u2028separator and a lone \ud800 surrogate', 'from toJSON', 'hidden toJSON'];
    const results = onDisk.filter((r) => r.type === 'tool.result');
    expect(results.map((r) => (r.payload as { output: unknown }).output)).toEqual(expected);
    // Subscribers get exactly what the log holds, record by record.
    for (const record of delivered) {
      const line = onDisk.find((r) => r.seq === record.seq);
      expect(line, `seq ${record.seq}`).toBeDefined();
      expect({ seq: record.seq, ts: record.ts, type: record.type, payload: record.payload }).toStrictEqual(line);
    }
    const tools = session.snapshot().messages.filter((m) => m.role === 'tool');
    expect(tools.map((m) => m.content)).toEqual(expected);
    await sent.run.done();
    await hub.close();
  });
});

describe('a tool result near the line limit (TJ-LIVE-004: the result and its message, whole or not at all)', () => {
  const MAX_LINE = 16 * 1024 * 1024; // the writer's default line limit, which the hub's event logs use
  /** The bytes of a record's line without its output's characters (ASCII output: one byte each, no escapes). */
  const overhead = (seq: number, type: string, payload: Record<string, unknown>) =>
    JSON.stringify({ seq, ts: '2026-11-26T00:00:00.000Z', type, payload }).length;

  it('refuses a result whose tool.result fits but whose message does not, and writes neither', async () => {
    const { root, hub, session, sent } = await startedRun();
    const file = join(root, 's1', 'events.jsonl');
    const seq = (session.durableSeq ?? -1) + 1;
    const result = { request_id: 'r1', tool_call_id: 'big', output: '' };
    // The tool.result line is exactly the limit: it alone would be accepted; its message, longer, would not.
    const output = 'y'.repeat(MAX_LINE - overhead(seq, 'tool.result', result));
    await expect(sent.run.toolResult({ toolCallId: 'big', output })).rejects.toMatchObject({ code: 'line_too_long' });
    await session.flush();
    expect(
      logLines(file).filter((r) => (r.payload as { tool_call_id?: string } | undefined)?.tool_call_id === 'big'),
    ).toEqual([]);
    expect(session.snapshot().messages.filter((m) => m.role === 'tool')).toHaveLength(0);
    // The session goes on.
    await sent.run.toolResult({ toolCallId: 'ok', output: 'fine' });
    await sent.run.done();
    await hub.close();
  });

  it('writes both when the message fits too', async () => {
    const { hub, session, sent } = await startedRun();
    const seq = (session.durableSeq ?? -1) + 2;
    const message = {
      message: { role: 'tool', content: '', id: 'r1.tool.big', tool_call_id: 'big', request_id: 'r1' },
    };
    // One byte under the limit for the message (the check may count its seq a digit longer than it will be).
    const output = 'y'.repeat(MAX_LINE - overhead(seq, 'message_append', message) - 1);
    await sent.run.toolResult({ toolCallId: 'big', output });
    const tools = session.snapshot().messages.filter((m) => m.role === 'tool');
    expect(tools.map((m) => (m.content as string).length)).toEqual([output.length]);
    await sent.run.done();
    await hub.close();
  });
});
