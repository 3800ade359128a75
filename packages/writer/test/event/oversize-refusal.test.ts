// `oversizeRefusal` (internal, for the live hub): whether a record would encode at a seq ahead of the log's next one,
// exactly as `append` decides it, with nothing reserved. The hub asks it for a tool result and its message before it
// appends either (TJ-LIVE-004), so it must agree with `append` on both sides of the line limit.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { oversizeRefusal } from '../../src/_internals/index.js';
import { openEventLog } from '../support/internals.js';
import { tempDir } from '../support/temp.js';

const MAX = 4096;
const message = (content: unknown) => ({ message: { role: 'tool', content } });

describe('oversizeRefusal', () => {
  it('agrees with append on each side of the line limit, for escaped text too, and reserves nothing', async () => {
    const log = await openEventLog({ file: join(tempDir(), 'events.jsonl'), maxLineBytes: MAX, clock: () => 0 });
    // Where the limit falls for a message of `n` ASCII characters, and for `n` characters JSON escapes (six bytes).
    for (const unit of ['y', '\u0001']) {
      for (let n = 600; n < MAX; n += 1) {
        const payload = message(unit.repeat(n));
        const refusal = oversizeRefusal(log, 'message_append', payload, 0);
        const before = log.lastSeq;
        if (refusal === null) {
          expect((await log.append('message_append', payload)).seq).toBe((before ?? -1) + 1);
          continue;
        }
        expect(refusal).toMatchObject({ code: 'line_too_long' });
        expect(log.lastSeq).toBe(before);
        await expect(log.append('message_append', payload)).rejects.toMatchObject({ code: 'line_too_long' });
        break;
      }
    }
    await log.close();
  });

  it('counts the seq it is given, answers small records without encoding them, and large ones as append would', async () => {
    const log = await openEventLog({ file: join(tempDir(), 'events.jsonl'), maxLineBytes: MAX, clock: () => 0 });
    // The first record carries the log's epoch (TJ-EVENT-023); the line measured below is the second one's.
    await log.appendMessage({ role: 'user', content: 'first' });
    // A line that fits at seq 1 but not with a seq of sixteen digits more.
    const base = JSON.stringify({
      seq: 1,
      ts: new Date(0).toISOString(),
      type: 'message_append',
      payload: message(''),
    });
    const fitting = message('y'.repeat(MAX - base.length));
    expect(oversizeRefusal(log, 'message_append', fitting, 0)).toBeNull();
    expect(oversizeRefusal(log, 'message_append', fitting, 1e15)).toMatchObject({ code: 'line_too_long' });
    // Too small to reach the limit: not encoded, so a schema fault is append's to report.
    expect(oversizeRefusal(log, 'message_append', { message: { content: 'no role' } }, 0)).toBeNull();
    // Large enough to be encoded: the encoding's refusal, whatever it is.
    expect(oversizeRefusal(log, 'message_append', { message: { content: 'y'.repeat(MAX / 2) } }, 0)).toMatchObject({
      code: 'invalid_record',
    });
    expect(log.lastSeq).toBe(0);
    await log.close();
  });
});
