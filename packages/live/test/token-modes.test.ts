// What a 1,000-token answer costs on disk in each token mode (spec §18.2, TJ-LIVE-058, TJ-LIVE-059), counted through
// the file-system layer on a real directory: records, bytes and syncs of the event log. Counts of records are
// asserted; syncs depend on the delta timer and are bounded, bytes are printed.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type LiveTokenEvent, openConversationHub, SEGMENT_CHUNK_CHARS, type TokenMode } from '@turnjournal/live';
import { nodeFileSystem } from '@turnjournal/writer/file-system';
import { describe, expect, it } from 'vitest';
import { countLogCalls, logLines, tempStore } from './support.js';

/** Token `n` of the answer: a paragraph ends after every 100th token but the last. */
const token = (n: number) => (n % 100 === 99 && n !== 999 ? `w${n}.\n\n` : `w${n} `);
const ANSWER = Array.from({ length: 1000 }, (_, n) => token(n)).join('');

async function answer(mode: TokenMode) {
  const root = tempStore('tj-token-cost-');
  const log = join(root, 's1', 'events.jsonl');
  const { fs, calls } = countLogCalls(nodeFileSystem, log);
  const hub = openConversationHub({ root, fs, retention: false, tokens: mode });
  const session = await hub.session('s1');
  const sent = await session.send({ requestId: 'r1', content: 'write a long answer' });
  if (!sent.created) throw new Error('expected a new run');
  const syncsBefore = calls.fdatasyncs + calls.fsyncs;
  const spaceBefore = calls.spaceWrites;
  const bytesBefore = readFileSync(log, 'utf8').replace(/\0+$/, '').length;
  for (let n = 0; n < 1000; n += 1) {
    await sent.run.delta(token(n));
    // A model's pace, roughly: the delta timer (20 ms) fires in the pauses.
    if (n % 50 === 49) await new Promise((resolve) => setTimeout(resolve, 25));
  }
  await sent.run.done();
  await hub.close();
  const records = logLines(log);
  const run = records.slice(records.findIndex((r) => r.type === 'assistant.segment.started'));
  return {
    types: run.map((r) => r.type),
    deltas: run.filter((r) => r.type === 'chat.delta').map((r) => r.payload.text as string),
    message: run.find((r) => r.type === 'message_append')?.payload.message as { content: string },
    bytes: readFileSync(log, 'utf8').replace(/\0+$/, '').length - bytesBefore,
    // The syncs the answer's records asked for: each extension of the space ahead of them has a sync of its own.
    syncs: calls.fdatasyncs + calls.fsyncs - syncsBefore - (calls.spaceWrites - spaceBefore),
  };
}

describe('a 1,000-token answer on disk per token mode (TJ-LIVE-058, TJ-LIVE-059)', () => {
  it('durable writes a chat.delta per token; segments writes one per paragraph and none for the last one', async () => {
    const durable = await answer('durable');
    const segments = await answer('segments');
    console.info(
      `1,000-token answer (${ANSWER.length} chars): durable ${durable.types.length} records, ${durable.bytes} bytes, ` +
        `${durable.syncs} syncs; segments ${segments.types.length} records, ${segments.bytes} bytes, ${segments.syncs} syncs`,
    );
    expect(durable.deltas).toHaveLength(1000);
    expect(durable.deltas.join('')).toBe(ANSWER);
    expect(durable.message.content).toBe(ANSWER);

    // Nine paragraph ends: nine records of the text through each; the last paragraph only in the message.
    const paragraphs = ANSWER.split('\n\n');
    expect(segments.deltas).toEqual(paragraphs.slice(0, -1).map((p) => `${p}\n\n`));
    expect(segments.types.filter((t) => t !== 'checkpoint')).toEqual([
      'assistant.segment.started',
      ...Array<string>(9).fill('chat.delta'),
      'message_append',
      'chat.done',
    ]);
    expect(segments.message.content).toBe(ANSWER);
    // A sync per written paragraph at most (the delta timer), one for the end: never one per token.
    expect(segments.syncs).toBeLessThanOrEqual(9 + 1);
  });

  it('segments writes the unwritten text once it reaches SEGMENT_CHUNK_CHARS, and none of a short answer', async () => {
    const root = tempStore('tj-token-chunk-');
    const hub = openConversationHub({ root, retention: false, tokens: 'segments', deltaFlushMs: 600_000 });
    const session = await hub.session('s1');
    const sent = await session.send({ requestId: 'r1', content: 'go' });
    if (!sent.created) throw new Error('expected a new run');
    const tokens: LiveTokenEvent[] = [];
    const subscription = session.subscribe({ after: session.durableSeq, tokens: true });
    const word = 'abcdefg '; // 8 characters: the bound is reached at a token's end
    for (let n = 0; n < (2 * SEGMENT_CHUNK_CHARS) / word.length + 3; n += 1) await sent.run.delta(word);
    await session.flush();
    const log = join(root, 's1', 'events.jsonl');
    const deltas = logLines(log).filter((r) => r.type === 'chat.delta');
    expect(deltas.map((r) => (r.payload.text as string).length)).toEqual([SEGMENT_CHUNK_CHARS, SEGMENT_CHUNK_CHARS]);
    // Nothing was durable to a subscriber but the chunks' records; the tokens came all the same.
    for (;;) {
      const next = await subscription.next();
      if (next.done) break;
      if (next.value.kind === 'token') tokens.push(next.value);
      if (tokens.reduce((sum, t) => sum + t.text.length, 0) === 2 * SEGMENT_CHUNK_CHARS + 3 * word.length) break;
    }
    expect(tokens.map((t) => t.text).join('')).toBe(word.repeat((2 * SEGMENT_CHUNK_CHARS) / word.length + 3));
    subscription.close();
    await sent.run.done();
    const sent2 = await session.send({ requestId: 'r2', content: 'short' });
    if (!sent2.created) throw new Error('expected a new run');
    await sent2.run.delta('Yes.');
    await sent2.run.done();
    const r2 = logLines(log).filter(
      (r) => r.payload?.request_id === 'r2' || (r.payload?.message as { request_id?: string })?.request_id === 'r2',
    );
    expect(r2.map((r) => r.type)).toEqual(['chat.started', 'message_append', 'message_append', 'chat.done']);
    await hub.close();
  });

  it('gives a subscriber that joins a long open segment its whole text, then each token after it (TJ-LIVE-060)', async () => {
    const root = tempStore('tj-token-late-');
    const hub = openConversationHub({ root, retention: false, deltaFlushMs: 600_000 });
    const session = await hub.session('s1');
    const sent = await session.send({ requestId: 'r1', content: 'go' });
    if (!sent.created) throw new Error('expected a new run');
    // Past the tail of tokens the session keeps apart for subscribers (64 Ki characters, twice over).
    const word = 'abcdefg ';
    for (let n = 0; n < 40_000; n += 1) await sent.run.delta(word);
    const early = session.subscribe({ after: session.durableSeq, tokens: true });
    const first = await early.next();
    expect(first.value).toMatchObject({ kind: 'token', messageId: 'r1.a1', offset: 0 });
    expect((first.value as LiveTokenEvent).text).toBe(word.repeat(40_000));
    await sent.run.delta('tail');
    const second = await early.next();
    expect(second.value).toEqual({ kind: 'token', requestId: 'r1', messageId: 'r1.a1', offset: 320_000, text: 'tail' });
    early.close();
    await sent.run.done();
    await hub.close();
  });

  it('refuses a token mode it does not know', () => {
    expect(() => openConversationHub({ root: tempStore(), tokens: 'lazy' as TokenMode })).toThrow(
      expect.objectContaining({ code: 'invalid_request' }),
    );
  });
});
