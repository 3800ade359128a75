// The event-log writer's fast path for `chat.delta` (src/event/encode-delta.ts) must write the line the generic
// checked encoder writes, byte for byte, and leave everything else to it: whatever the schema refuses is refused with
// the generic path's error. Property over arbitrary strings (lone surrogates, U+2028/U+2029, astral characters). The
// line as text (`DeltaLines`, what the synchronous held path queues) and its counted UTF-8 length are checked too.
import { checkProperty } from '@turnjournal/test-support';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeCheckedRecord } from '../../src/append/encode-checked.js';
import { DeltaLines, encodeDeltaRecord } from '../../src/event/encode-delta.js';

const LIMIT = 16 * 1024 * 1024;
const TS = '2026-11-26T04:30:58.123Z';

function generic(seq: number, payload: Record<string, unknown>, limit = LIMIT) {
  return encodeCheckedRecord(
    { seq, ts: TS, type: 'chat.delta', payload },
    { family: 'event', type: 'chat.delta', v1Only: false },
    limit,
    'events.jsonl',
  );
}

/** Strings of every kind of UTF-16 unit: lone surrogates, line separators, controls, quotes, astral pairs. */
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  // ASCII only, where the line's length is counted without encoding it: every code below 0x80.
  fc.string({ unit: 'binary-ascii', maxLength: 40 }),
  fc.string({
    unit: fc.constantFrom('\u2028', '\u2029', '"', '\\', '\n', '\u0000', '\ud800', '\udfff', 'a', 'é'),
    maxLength: 20,
  }),
  // The edges of what is counted without encoding: U+001F/U+0020, U+007F/U+0080, U+07FF/U+0800, quote, backslash.
  fc.string({
    unit: fc.constantFrom('\u001f', ' ', '~', '\u007f', '\u0080', '\u07ff', '\u0800', '"', '\\', 'x'),
    maxLength: 20,
  }),
);

describe('chat.delta fast path (encodeDeltaRecord)', () => {
  it('writes the generic encoder’s bytes and parsed value for every string', async () => {
    await checkProperty(
      'chat-delta-fast-path',
      fc.property(
        fc.nat({ max: Number.MAX_SAFE_INTEGER }),
        text.filter((s) => s !== ''),
        text.filter((s) => s !== ''),
        text,
        (seq, requestId, messageId, body) => {
          const payload = { request_id: requestId, message_id: messageId, text: body };
          const fast = encodeDeltaRecord(seq, TS, payload, LIMIT, new DeltaLines());
          const slow = generic(seq, payload);
          expect(fast).toBeDefined();
          expect(Buffer.from(fast?.bytes ?? []).equals(Buffer.from(slow.bytes))).toBe(true);
          expect(fast?.written).toEqual(slow.written);
          // The line as text, as the synchronous held path queues it, and the UTF-8 length it counts without encoding.
          const lines = new DeltaLines();
          const line = lines.line(seq, TS, requestId, messageId, body);
          expect(Buffer.from(line, 'utf8').equals(Buffer.from(slow.bytes))).toBe(true);
          expect(lines.bytes).toBe(slow.bytes.length);
        },
      ),
      { defaultRuns: 300 },
    );
  });

  it('writes the generic encoder’s bytes when a segment’s ids repeat or alternate between calls', async () => {
    // The fast path keeps the serialised ids of the last call: a hit, a miss and a switch back must all be exact.
    await checkProperty(
      'chat-delta-fast-path-repeated-ids',
      fc.property(
        fc.array(
          fc.tuple(
            text.filter((s) => s !== ''),
            text.filter((s) => s !== ''),
          ),
          { minLength: 1, maxLength: 3 },
        ),
        fc.array(fc.tuple(fc.nat(), text), { minLength: 1, maxLength: 12 }),
        (ids, calls) => {
          const lines = new DeltaLines();
          for (const [seq, body] of calls) {
            const [requestId, messageId] = ids[seq % ids.length] as [string, string];
            const payload = { request_id: requestId, message_id: messageId, text: body };
            const slow = generic(seq, payload).bytes;
            const fast = encodeDeltaRecord(seq, TS, payload, LIMIT, lines);
            expect(Buffer.from(fast?.bytes ?? []).equals(Buffer.from(slow))).toBe(true);
            expect(Buffer.from(lines.line(seq, TS, requestId, messageId, body), 'utf8').equals(Buffer.from(slow))).toBe(
              true,
            );
            expect(lines.bytes).toBe(slow.length);
          }
        },
      ),
      { defaultRuns: 300 },
    );
  });

  it('leaves every other shape to the generic path, which refuses what the schema refuses', () => {
    const refused: Record<string, unknown>[] = [
      { request_id: 'r1', message_id: 'r1.a1', text: 42 },
      { request_id: 'r1', message_id: 'r1.a1' },
      { request_id: '', message_id: 'r1.a1', text: 'x' },
      { request_id: 'r1', message_id: '', text: 'x' },
      { request_id: 'r1', message_id: 'r1.a1', text: undefined },
    ];
    const lines = new DeltaLines();
    for (const payload of refused) {
      expect(encodeDeltaRecord(1, TS, payload, LIMIT, lines)).toBeUndefined();
      expect(() => generic(1, payload)).toThrow(expect.objectContaining({ code: 'invalid_record' }));
    }
    // Valid, but not the plain three members in schema order: the generic path writes them as given.
    const other: Record<string, unknown>[] = [
      { text: 'x', request_id: 'r1', message_id: 'r1.a1' },
      { request_id: 'r1', message_id: 'r1.a1', text: 'x', extra: true },
      Object.assign(Object.create({ toJSON: () => ({}) }) as object, {
        request_id: 'r1',
        message_id: 'r1.a1',
        text: 'x',
      }),
    ];
    for (const payload of other) expect(encodeDeltaRecord(1, TS, payload, LIMIT, lines)).toBeUndefined();
    // Over the line-size limit: the generic path's `line_too_long`.
    const long = { request_id: 'r1', message_id: 'r1.a1', text: 'x'.repeat(200) };
    expect(encodeDeltaRecord(1, TS, long, 150, lines)).toBeUndefined();
    expect(() => generic(1, long, 150)).toThrow(expect.objectContaining({ code: 'line_too_long' }));
  });
});
