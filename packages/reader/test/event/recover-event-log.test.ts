import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ReaderError } from '../../src/errors.js';
import { recoverEventFold, recoverEventLog } from '../../src/event/recover-event-log.js';
import { tempFile } from '../support/temp.js';
import { ev, eventLog, foldFile, line, msg, PROPERTY, PROPERTY_TIMEOUT } from './event-log.js';

const a = msg('user', 'a');
const b = msg('assistant', 'b');
const c = msg('user', 'c');

describe('recoverEventLog (spec §15.2)', () => {
  it('folds the whole file when the log has no valid checkpoint (TJ-REPLAY-008)', async () => {
    const path = tempFile(
      [ev(0, 'message_append', { message: a }), ev(1, 'message_append', { message: b })].map(line).join(''),
    );
    const recovered = await recoverEventLog(path);
    expect(recovered.messages).toEqual([a, b]);
    expect(recovered).toMatchObject({ checkpointOffset: null, startOffset: 0, lastSeq: 1 });
  });

  it('starts at the last valid checkpoint and folds only it and the records after it (TJ-REPLAY-003, TJ-REPLAY-004)', async () => {
    const head = [
      ev(0, 'message_append', { message: a }),
      ev(1, 'checkpoint', { messages: [a] }),
      ev(2, 'message_append', { message: b }),
    ];
    const tail = [ev(3, 'checkpoint', { messages: [c] }), ev(4, 'message_append', { message: a })];
    const prefix = head.map(line).join('');
    const recovered = await recoverEventLog(tempFile(prefix + tail.map(line).join('')));
    // The checkpoint says [c], not [a, b]: recovery trusts it (TJ-EVENT-007 makes them equal in a correct log).
    expect(recovered.messages).toEqual([c, a]);
    expect(recovered).toMatchObject({
      checkpointOffset: prefix.length,
      startOffset: prefix.length,
      lastSeq: 4,
      firstSeq: 3,
    });
  });

  it('reads a number of bytes that follows the tail, not the log (TJ-REPLAY-005)', async () => {
    const prefix = Array.from({ length: 5000 }, (_, i) =>
      line(ev(i, 'message_append', { message: msg('user', `m${i}`) })),
    );
    const tail = [ev(5000, 'checkpoint', { messages: [a] }), ev(5001, 'message_append', { message: b })].map(line);
    const content = prefix.join('') + tail.join('');
    const tailBytes = tail.join('').length;
    const recovered = await recoverEventLog(tempFile(content), { chunkBytes: 256, findActiveRun: false });
    expect(recovered.messages).toEqual([a, b]);
    expect(recovered.bytesRead).toBeLessThanOrEqual(2 * tailBytes + 256);
    expect(recovered.bytesRead).toBeLessThan(content.length / 50);
  });

  it('skips a damaged checkpoint line and a torn tail and takes the next earlier valid checkpoint (TJ-REPLAY-006)', async () => {
    const good = line(ev(0, 'checkpoint', { messages: [a] }));
    const damaged = `${JSON.stringify(ev(1, 'checkpoint', { messages: [b] })).slice(0, -2)}\n`;
    const invalid = line(ev(2, 'checkpoint', { messages: 'nope' }));
    const torn = JSON.stringify(ev(3, 'checkpoint', { messages: [c] }));
    const path = tempFile(good + damaged + invalid + torn);
    const recovered = await recoverEventLog(path, { chunkBytes: 7 });
    expect(recovered.messages).toEqual([a]);
    expect(recovered.checkpointOffset).toBe(0);
    expect(recovered.findings.map((f) => f.code)).toEqual(['malformed_line', 'invalid_record', 'torn_tail']);
    expect(recovered.messages).toEqual((await foldFile(path)).messages);
  });

  it('steps over pre-allocated space at the end without a finding, and reads it once (TJ-FRAME-036, TJ-REPLAY-005)', async () => {
    const records = [
      ev(0, 'message_append', { message: a }),
      ev(1, 'checkpoint', { messages: [a] }),
      ev(2, 'message_append', { message: b }),
    ];
    const content = records.map(line).join('');
    const space = 16 * 256;
    const plainLog = await recoverEventLog(tempFile(content), { chunkBytes: 256 });
    const withSpace = await recoverEventLog(tempFile(Buffer.concat([Buffer.from(content), Buffer.alloc(space)])), {
      chunkBytes: 256,
    });
    expect(withSpace.findings).toEqual([]);
    expect({ ...withSpace, bytesRead: 0 }).toEqual({ ...plainLog, bytesRead: 0 });
    // The backward scan reads the space once; the forward fold stops where the space begins and never reads it again.
    expect(withSpace.bytesRead).toBeLessThanOrEqual(plainLog.bytesRead + space + 256);
  });

  it('reports a torn tail before the space without the space, and says where the data ends (TJ-FRAME-030, TJ-FRAME-037)', async () => {
    const head = [ev(0, 'checkpoint', { messages: [a] }), ev(1, 'message_append', { message: b })].map(line).join('');
    const torn = '{"seq":2,"ty';
    const path = tempFile(Buffer.concat([Buffer.from(head + torn), Buffer.alloc(3000)]), 'events.jsonl');
    const recovered = await recoverEventFold(path, { chunkBytes: 64 });
    expect(recovered.framing).toMatchObject([{ code: 'torn_tail', offset: head.length, length: torn.length }]);
    expect(recovered.dataEnd).toBe(head.length + torn.length);
    expect(recovered.fold.finish().messages).toEqual([a, b]);
    const space = await recoverEventFold(tempFile(Buffer.concat([Buffer.from(head), Buffer.alloc(3000)])));
    expect(space).toMatchObject({ framing: [], dataEnd: head.length });
    const nothing = await recoverEventFold(tempFile(Buffer.alloc(3000)));
    expect(nothing).toMatchObject({ framing: [], dataEnd: 0, checkpointOffset: null, startOffset: 0 });
    expect(nothing.fold.finish().messages).toEqual([]);
  });

  it('assembles a checkpoint line longer than the chunk, and skips one over the line-size limit', async () => {
    const big = Array.from({ length: 50 }, (_, i) => msg('user', `message ${i}`));
    const small = line(ev(0, 'checkpoint', { messages: [a] }));
    const large = line(ev(1, 'checkpoint', { messages: big }));
    const path = tempFile(small + large);
    expect((await recoverEventLog(path, { chunkBytes: 10 })).messages).toEqual(big);
    const limited = await recoverEventLog(path, { chunkBytes: 10, maxLineBytes: small.length });
    expect(limited.messages).toEqual([a]);
    expect(limited.findings.map((f) => f.code)).toEqual(['oversized_line']);
  });

  it('reads back to the last chat.started before the checkpoint, so the active run and overlay are exact (TJ-REPLAY-011)', async () => {
    const records = [
      ev(0, 'message_append', { message: a }),
      ev(1, 'chat.started', { request_id: 'r' }),
      ev(2, 'assistant.segment.started', { request_id: 'r', message_id: 'm' }),
      ev(3, 'chat.delta', { request_id: 'r', message_id: 'm', text: 'Hel' }),
      ev(4, 'undo', { n: 9 }),
      ev(5, 'assistant.segment.started', { request_id: 'r', message_id: 'm2' }),
      ev(6, 'chat.delta', { request_id: 'r', message_id: 'm2', text: 'Hel' }),
      ev(7, 'checkpoint', { messages: [a, b] }),
      ev(8, 'chat.delta', { request_id: 'r', message_id: 'm2', text: 'lo' }),
    ];
    const path = tempFile(records.map(line).join(''));
    const whole = await foldFile(path);
    const recovered = await recoverEventLog(path, { chunkBytes: 16 });
    expect(recovered.startOffset).toBe(line(records[0]).length);
    expect(recovered.activeRun).toEqual({ requestId: 'r', status: 'running', startedSeq: 1, lastSeq: 8 });
    expect(recovered.overlay).toEqual({ requestId: 'r', messageId: 'm2', text: 'Hello' });
    expect(recovered.messages).toEqual([a, b]);
    // The undo before the checkpoint acts on an unknown list: no inapplicable_event from the recovery.
    expect(recovered.findings).toEqual([]);
    expect({ ...recovered, findings: [] }).toMatchObject({
      messages: whole.messages,
      activeRun: whole.activeRun,
      overlay: whole.overlay,
      lastSeq: whole.lastSeq,
    });
    const tailOnly = await recoverEventLog(path, { findActiveRun: false });
    expect(tailOnly.activeRun).toBeNull();
    expect(tailOnly.messages).toEqual([a, b]);
  });

  it('gives byte offsets but no line numbers when it starts after the first line (TJ-AUDIT-003)', async () => {
    const head = line(ev(0, 'checkpoint', { messages: [] })) + line(ev(1, 'checkpoint', { messages: [] }));
    const path = tempFile(`${head}not json\n`);
    const recovered = await recoverEventLog(path);
    expect(recovered.startOffset).toBeGreaterThan(0);
    expect(recovered.findings).toMatchObject([{ code: 'malformed_line', offset: head.length }]);
    expect(recovered.findings[0]?.line).toBeUndefined();
  });

  it(
    'yields the messages and last seq of the whole-file fold, for logs with damage, torn tails and seq anomalies (TJ-REPLAY-007)',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          eventLog(true),
          fc.constantFrom(7, 16, 64, 65536),
          fc.boolean(),
          fc.constantFrom(undefined, 120),
          async (log, chunkBytes, findActiveRun, maxLineBytes) => {
            const path = tempFile(log.content, 'events.jsonl');
            const limit = maxLineBytes === undefined ? {} : { maxLineBytes };
            const whole = await foldFile(path, limit);
            const recovered = await recoverEventLog(path, { chunkBytes, findActiveRun, ...limit });
            expect(recovered.messages).toEqual(whole.messages);
            expect(recovered.lastSeq).toBe(whole.lastSeq);
          },
        ),
        PROPERTY,
      );
    },
    PROPERTY_TIMEOUT,
  );

  it(
    'recovers the same state from a log with pre-allocated space at its end as from the log without it (TJ-FRAME-036)',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          eventLog(true),
          fc.constantFrom(7, 64, 65536),
          fc.nat({ max: 2000 }),
          async (log, chunkBytes, space) => {
            const without = await recoverEventLog(tempFile(log.content, 'events.jsonl'), { chunkBytes });
            const path = tempFile(Buffer.concat([Buffer.from(log.content), Buffer.alloc(space)]), 'events.jsonl');
            const withSpace = await recoverEventLog(path, { chunkBytes });
            const comparable = (r: typeof without) => ({
              ...r,
              bytesRead: 0,
              findings: r.findings.map(({ file: _f, ...f }) => f),
            });
            expect(comparable(withSpace)).toEqual(comparable(without));
          },
        ),
        PROPERTY,
      );
    },
    PROPERTY_TIMEOUT,
  );

  it(
    'yields the snapshot of the whole-file fold for logs without seq anomalies (TJ-REPLAY-007, TJ-REPLAY-011)',
    async () => {
      await fc.assert(
        fc.asyncProperty(eventLog(false), fc.constantFrom(7, 64, 65536), async (log, chunkBytes) => {
          const path = tempFile(log.content, 'events.jsonl');
          const whole = await foldFile(path);
          const recovered = await recoverEventLog(path, { chunkBytes });
          expect({
            messages: recovered.messages,
            activeRun: recovered.activeRun,
            overlay: recovered.overlay,
            lastSeq: recovered.lastSeq,
          }).toEqual({
            messages: whole.messages,
            activeRun: whole.activeRun,
            overlay: whole.overlay,
            lastSeq: whole.lastSeq,
          });
        }),
        PROPERTY,
      );
    },
    PROPERTY_TIMEOUT,
  );
});

/** Framing codes that are damage (spec §3.3): in prefix mode the first of them ends the view. */
const DAMAGE = new Set(['malformed_line', 'zero_filled_region', 'oversized_line', 'glued_record']);

/** What a reader derives from a log, without findings and positions. */
const derived = (state: Awaited<ReturnType<typeof recoverEventLog>> | Awaited<ReturnType<typeof foldFile>>) => ({
  messages: state.messages,
  lastSeq: state.lastSeq,
  activeRun: state.activeRun,
  overlay: state.overlay,
  undelivered: state.undelivered,
  epoch: state.epoch,
});

describe('recoverEventLog in prefix mode (spec §6.8)', () => {
  const damagedThenCheckpoint = () => {
    const head = line(ev(0, 'message_append', { message: a }));
    const torn = `${JSON.stringify(ev(1, 'message_append', { message: b })).slice(0, -5)}\n`;
    const tail = [
      { ...ev(2, 'checkpoint', { messages: [a, b] }), epoch: 'e-after-the-hole' },
      ev(3, 'message_append', { message: c }),
    ];
    return { head, path: tempFile(head + torn + tail.map(line).join('')) };
  };

  it('folds no checkpoint after the first damaged line and nothing from that line on (TJ-EVENT-031, TJ-EVENT-032)', async () => {
    const { head, path } = damagedThenCheckpoint();
    const recovered = await recoverEventLog(path, { mode: 'prefix', chunkBytes: 16 });
    expect(derived(recovered)).toMatchObject({ messages: [a], lastSeq: 0, epoch: null });
    expect(recovered).toMatchObject({ checkpointOffset: null, startOffset: 0 });
    expect(recovered.findings.map((f) => [f.code, f.offset])).toEqual([['malformed_line', head.length]]);
  });

  it('leaves the default, tolerant, recovery at the checkpoint after the damage (TJ-REPLAY-006)', async () => {
    const { path } = damagedThenCheckpoint();
    const recovered = await recoverEventLog(path, { chunkBytes: 16 });
    expect(derived(recovered)).toMatchObject({ messages: [a, b, c], lastSeq: 3, epoch: 'e-after-the-hole' });
    expect(recovered.checkpointOffset).toBeGreaterThan(0);
  });

  it('refuses a mode it does not know, and strict, with invalid_option', async () => {
    const { path } = damagedThenCheckpoint();
    for (const mode of ['strict', 'Prefix'])
      await expect(
        recoverEventLog(path, { mode: mode as 'prefix' }).catch((error: unknown) =>
          error instanceof ReaderError ? error.code : Promise.reject(error),
        ),
      ).resolves.toBe('invalid_option');
  });

  it(
    'yields the state of the log cut before its first damaged line, for logs with damage, torn tails, space and seq anomalies (TJ-EVENT-031, TJ-EVENT-032)',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          eventLog(true),
          fc.constantFrom(7, 64, 65536),
          fc.constantFrom(0, 300),
          async (log, chunkBytes, space) => {
            const bytes = Buffer.concat([Buffer.from(log.content), Buffer.alloc(space)]);
            const path = tempFile(bytes, 'events.jsonl');
            const recovered = await recoverEventLog(path, { mode: 'prefix', chunkBytes });
            // The oracle: a tolerant fold of the bytes before the first damage, which hold no damage at all.
            const firstDamage = recovered.findings.find((f) => DAMAGE.has(f.code));
            const cut = firstDamage === undefined ? bytes : bytes.subarray(0, firstDamage.offset);
            const whole = await foldFile(tempFile(cut, 'events.jsonl'));
            expect(whole.framing.filter((code) => DAMAGE.has(code))).toEqual([]);
            expect(derived(recovered)).toEqual(derived(whole));
            // And the prefix-mode read of the whole file agrees with both.
            expect(derived(await foldFile(path, { mode: 'prefix' }))).toEqual(derived(whole));
          },
        ),
        PROPERTY,
      );
    },
    PROPERTY_TIMEOUT,
  );
});
