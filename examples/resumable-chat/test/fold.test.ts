// The page's fold of token events and records (TJ-LIVE-060, TJ-LIVE-061): token text runs ahead of the records and is
// provisional; the segment's records cover it, its message replaces it, and the run's end drops what is left of it.
import { describe, expect, it } from 'vitest';
import { applyRecord, applyToken, emptyModel, type Model, type RecordFrame } from '../public/fold.js';

const OPTIONS = { live: true, clientId: 'c1' };

function started(): Model {
  const model = emptyModel('s1');
  const records: RecordFrame[] = [
    { seq: 0, type: 'chat.started', payload: { request_id: 'r1', content: 'hi' } },
    { seq: 1, type: 'message_append', payload: { message: { role: 'user', content: 'hi', id: 'r1.user' } } },
  ];
  for (const record of records) expect(applyRecord(model, record, OPTIONS)).toBe('applied');
  return model;
}

const token = (offset: number, text: string, messageId = 'r1.a1') => ({ requestId: 'r1', messageId, offset, text });

describe('fold of tokens (TJ-LIVE-061)', () => {
  it('opens the segment from a token at offset 0, extends it by offset, ignores repeats and tokens past its end', () => {
    const model = started();
    expect(applyToken(model, token(3, 'late'))).toBe(false);
    expect(model.overlay).toBeNull();
    expect(applyToken(model, token(0, 'Hello'))).toBe(true);
    expect(applyToken(model, token(5, ' world'))).toBe(true);
    expect(applyToken(model, token(0, 'Hello'))).toBe(false); // a reconnect's token from 0: nothing new
    expect(applyToken(model, token(0, 'Hello world, again'))).toBe(true);
    expect(applyToken(model, token(40, 'gap'))).toBe(false);
    expect(model.overlay).toEqual({ requestId: 'r1', messageId: 'r1.a1', text: 'Hello world, again', durable: 0 });
  });

  it('keeps token text ahead of the durable deltas, which cover it without doubling it', () => {
    const model = started();
    applyToken(model, token(0, 'Hello world'));
    applyRecord(
      model,
      { seq: 2, type: 'assistant.segment.started', payload: { request_id: 'r1', message_id: 'r1.a1' } },
      OPTIONS,
    );
    applyRecord(
      model,
      { seq: 3, type: 'chat.delta', payload: { request_id: 'r1', message_id: 'r1.a1', text: 'Hello' } },
      OPTIONS,
    );
    expect(model.overlay?.text).toBe('Hello world');
    applyRecord(
      model,
      { seq: 4, type: 'chat.delta', payload: { request_id: 'r1', message_id: 'r1.a1', text: ' world' } },
      OPTIONS,
    );
    applyRecord(
      model,
      { seq: 5, type: 'chat.delta', payload: { request_id: 'r1', message_id: 'r1.a1', text: '!' } },
      OPTIONS,
    );
    expect(model.overlay).toMatchObject({ text: 'Hello world!', durable: 12 });
  });

  it('after a crash: the partial message replaces the token text the log never held, the run end clears it', () => {
    const model = started();
    applyRecord(
      model,
      { seq: 2, type: 'assistant.segment.started', payload: { request_id: 'r1', message_id: 'r1.a1' } },
      OPTIONS,
    );
    applyRecord(
      model,
      { seq: 3, type: 'chat.delta', payload: { request_id: 'r1', message_id: 'r1.a1', text: 'Intro.\n\n' } },
      OPTIONS,
    );
    applyToken(model, token(0, 'Intro.\n\ntail never written'));
    expect(model.overlay?.text).toBe('Intro.\n\ntail never written');
    // What the reconnecting page receives after its cursor (TJ-LIVE-017, TJ-LIVE-016).
    const partial = { role: 'assistant', content: 'Intro.\n\n', id: 'r1.a1', request_id: 'r1', partial: true };
    applyRecord(model, { seq: 4, type: 'message_append', payload: { message: partial } }, OPTIONS);
    applyRecord(
      model,
      { seq: 5, type: 'chat.cancelled', payload: { request_id: 'r1', reason: 'server_startup_recovery' } },
      OPTIONS,
    );
    expect(model.overlay).toBeNull();
    expect(model.messages.at(-1)).toEqual(partial);
    expect(model.runs.r1).toMatchObject({ status: 'cancelled', reason: 'server_startup_recovery' });
    // A late token of the committed segment does not bring the lost text back.
    expect(applyToken(model, token(0, 'Intro.\n\ntail never written'))).toBe(false);
    expect(model.overlay).toBeNull();
  });

  it('drops token text left over at the run end when the segment had no message (segments mode, crash before a boundary)', () => {
    const model = started();
    applyToken(model, token(0, 'nothing of this was written'));
    applyRecord(
      model,
      { seq: 2, type: 'chat.cancelled', payload: { request_id: 'r1', reason: 'server_startup_recovery' } },
      OPTIONS,
    );
    expect(model.overlay).toBeNull();
    expect(model.messages.map((m) => m.role)).toEqual(['user']);
  });
});
