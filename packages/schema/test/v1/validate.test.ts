import { describe, expect, it } from 'vitest';
import { classifyRecord, validateRecord } from '../../src/v1/index.js';

const submitted = {
  version: 1,
  event: 'submitted',
  turn_id: '20260511T001122Z-c9bd17bc9fc0',
  session_id: 'abc123',
  created_at: 1778458282.123,
  role: 'user',
  content: 'hello',
};

describe('validateRecord', () => {
  it('names the pointer, the expectation and what arrived for a wrong type', () => {
    const verdict = validateRecord({ ...submitted, created_at: 'yesterday' });
    expect(verdict.status).toBe('invalid');
    if (verdict.status !== 'invalid') return;
    expect(verdict.errors).toEqual([
      {
        pointer: '/created_at',
        keyword: 'type',
        expected: 'number',
        received: 'string "yesterday"',
        message: '/created_at: expected number, got string "yesterday"',
      },
    ]);
  });

  it('reports a missing required field at its own pointer', () => {
    const { turn_id: _dropped, ...rest } = submitted;
    const verdict = validateRecord(rest);
    expect(verdict.status === 'invalid' && verdict.errors.map((e) => e.pointer)).toEqual(['/turn_id']);
  });

  it('folds the alternatives of a nullable field into one error', () => {
    const verdict = validateRecord({ ...submitted, model: 3 });
    expect(verdict.status === 'invalid' && verdict.errors.map((e) => [e.pointer, e.expected])).toEqual([
      ['/model', 'string or null'],
    ]);
  });

  it('explains a failed union through the one alternative the value meant', () => {
    const messages = (value: unknown) => {
      const verdict = validateRecord(value);
      return verdict.status === 'invalid' ? verdict.errors.map((e) => e.message) : [];
    };
    const run = { type: 'run.start', run_id: 'r', ts: 't' };
    expect(messages({ ...run, input: { type: 'text' } })).toEqual(['/input/text: required property is missing']);
    expect(messages({ ...run, input: { type: 'parts', parts: [{ text: 'x' }] } })).toEqual([
      '/input/parts/0/type: required property is missing',
    ]);
    expect(messages({ ...run, input: 'hello' })).toEqual(['/input: expected object, got string "hello"']);
    const response = { type: 'llm.response', run_id: 'r', ts: 't', seq: 1 };
    const usage = { model: 'm', input_tokens: 1, output_tokens: 1 };
    expect(messages({ ...response, output: { messages: [], usage } })).toEqual([
      '/output/usage/total_tokens: required property is missing',
    ]);
    expect(messages({ ...submitted, event: 'completed', assistant_message_index: -1 })).toEqual([
      '/assistant_message_index: expected a number >= 0, got integer -1',
    ]);
  });

  it('follows the alternative whose shape matched when its errors lie deeper', () => {
    const messages = (payload: unknown) => {
      const verdict = validateRecord({ seq: 1, ts: 't', type: 'message_edit', payload });
      return verdict.status === 'invalid' ? verdict.errors.map((e) => e.message) : [];
    };
    expect(messages({ messages: [{}] })).toEqual(['/payload/messages/0/role: required property is missing']);
    expect(messages({ index: -1, message: { role: 'user' } })).toEqual([
      '/payload/index: expected a number >= 0, got integer -1',
    ]);
  });

  it('lists the alternatives when no single one fits', () => {
    const verdict = validateRecord({ seq: 1, ts: 't', type: 'message_edit', payload: { index: 1 } });
    expect(verdict.status === 'invalid' && verdict.errors.map((e) => e.message)).toEqual([
      '/payload: expected property "message" or property "messages", got object',
    ]);
  });

  it('says the list is truncated when TypeBox stopped gathering errors', () => {
    const wrong = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`m${i}`, 1]));
    const verdict = validateRecord({
      ...submitted,
      ...wrong,
      session_id: 1,
      role: 2,
      content: 3,
      stream_id: 4,
      workspace: 5,
      model: 6,
      model_provider: 7,
      attachments: 8,
      turn_id: 9,
    });
    expect(verdict.status === 'invalid' && verdict.truncated).toBe(true);
  });

  it('falls back to the default cap on a nonsensical maxErrors', () => {
    const verdict = validateRecord({ ...submitted, created_at: 'x' }, { maxErrors: Number.NaN });
    expect(verdict.status === 'invalid' && verdict.errors.length).toBe(1);
  });

  it('caps the error list and says it did', () => {
    const verdict = validateRecord(
      { version: 1, event: 'submitted', turn_id: 1, session_id: 2, created_at: '3', role: 4, content: 5 },
      { maxErrors: 2 },
    );
    expect(verdict.status).toBe('invalid');
    if (verdict.status !== 'invalid') return;
    expect(verdict.errors).toHaveLength(2);
    expect(verdict.truncated).toBe(true);
  });

  it('truncates long values in error previews so diagnostics never carry whole messages', () => {
    const verdict = validateRecord({ ...submitted, content: 'x'.repeat(10_000), created_at: 'y'.repeat(10_000) });
    expect(verdict.status === 'invalid' && verdict.errors[0]?.received.length).toBeLessThan(60);
  });

  it('describes values JSON cannot hold instead of throwing', () => {
    for (const created_at of [10n, () => 1, Symbol('s'), Number.POSITIVE_INFINITY, Number.NaN]) {
      const verdict = validateRecord({ ...submitted, created_at });
      expect(verdict.status).toBe('invalid');
      expect(verdict.status === 'invalid' && verdict.errors[0]?.received).not.toContain('null');
    }
  });

  it('does not throw on hostile values', () => {
    for (const value of [null, 0, 'x', [], [submitted], { type: 5 }, { event: null }, { event: ['submitted'] }]) {
      expect(() => validateRecord(value)).not.toThrow();
      expect(validateRecord(value).status).toBe('invalid');
    }
  });

  it('skips a record of another major version instead of calling it invalid', () => {
    expect(validateRecord({ ...submitted, version: 2 })).toMatchObject({ status: 'unsupported_version', version: 2 });
    expect(validateRecord({ type: 'header', schema_version: 3, run_id: 'r' })).toMatchObject({
      status: 'unsupported_version',
      version: 3,
    });
  });
});

describe('classifyRecord', () => {
  it('recognises a family from the record itself: its discriminator, then its shape', () => {
    expect(classifyRecord(submitted)).toMatchObject({ family: 'turn', type: 'submitted', kind: 'known' });
    expect(classifyRecord({ type: 'tool.output', run_id: 'r' })).toMatchObject({ family: 'run', kind: 'known' });
    expect(classifyRecord({ type: 'tool.result', seq: 1 })).toMatchObject({ family: 'event', kind: 'known' });
    expect(classifyRecord({ type: 'x.acme.note', seq: 1 })).toMatchObject({ family: 'event', kind: 'extension' });
    expect(classifyRecord({ type: 'telemetry' })).toMatchObject({ family: 'unknown', kind: 'unknown' });
    expect(classifyRecord({ schema_version: 1, session_id: 's', messages: [] })).toMatchObject({ family: 'state' });
    expect(classifyRecord({ hello: 'world' })).toMatchObject({ family: 'unknown', kind: 'unknown' });
    expect(classifyRecord({ type: 7 })).toMatchObject({ family: 'none' });
  });
});
