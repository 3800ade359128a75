// `AppendFile.appendRecord` queues a record's line as text and writes it straight into its batch's one buffer (no
// buffer per record): the bytes in the file, the acknowledgements and the refusals must be exactly those of
// `encodeRecord` and `appendLine`, whatever the line holds and whatever it is batched with.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AppendFile, type Durability, encodeRecord, WriterError } from '../support/internals.js';
import { recordingFileSystem } from '../support/recording-fs.js';
import { tempDir } from '../support/temp.js';

/** Records whose UTF-8 is longer than their text, or whose text the encoder escapes. */
const RECORDS: Record<string, unknown>[] = [
  { type: 'x.ascii', text: 'plain' },
  { type: 'x.accents', text: 'déjà vu, naïve façade' },
  { type: 'x.astral', text: 'emoji 😀 and 𝄞, a CJK 漢字' },
  { type: 'x.separators', text: 'a\u2028b\u2029c' },
  { type: 'x.lone', text: 'lone \ud800 surrogate' },
  { type: 'x.controls', text: 'line\nfeed\r\ttab\u0000nul' },
  { type: 'x.digits', id: '12345678901234567890', n: Number.MAX_SAFE_INTEGER, m: -Number.MAX_SAFE_INTEGER },
  { type: 'x.exponent', text: 'e+ in text', small: 1e-7, tiny: -2.5e-300 },
];

describe('AppendFile.appendRecord', () => {
  for (const durability of ['none', 'group', 'every'] as Durability[]) {
    it(`writes exactly encodeRecord's bytes, batched with appendLine lines, with their offsets (${durability})`, async () => {
      const file = join(tempDir(), 'records.jsonl');
      const fs = recordingFileSystem();
      const writer = await AppendFile.open(file, { durability, fs });
      const expected: Uint8Array[] = [];
      const appends: Promise<{ cursor: number; length: number }>[] = [];
      for (let round = 0; round < 3; round += 1) {
        for (const [n, record] of RECORDS.entries()) {
          const value = { ...record, round, n };
          expected.push(encodeRecord(value));
          appends.push(writer.appendRecord(value));
          // A line given as bytes between them: the batch mixes both kinds.
          const line = Buffer.from(`${JSON.stringify({ type: 'x.line', round, n })}\n`);
          expected.push(line);
          appends.push(writer.appendLine(line));
        }
      }
      const acks = await Promise.all(appends);
      await writer.close();
      let offset = 0;
      for (const [i, ack] of acks.entries()) {
        expect(ack).toEqual({ cursor: offset, length: expected[i]?.length });
        offset += expected[i]?.length ?? 0;
      }
      expect(readFileSync(file)).toEqual(Buffer.concat(expected));
      // Appended in one synchronous run: `none` writes them in one write; `group` writes the first at once and the
      // rest together behind its sync; `every` one by one. Text lines and byte lines share those writes.
      const writes = fs.writes.filter((w) => w.path === file).length;
      expect(writes).toBe({ none: 1, group: 2, every: expected.length }[durability]);
    });
  }

  it('refuses an integer outside ±(2^53-1), printed with 16+ digits or with an exponent, and writes nothing (TJ-FRAME-035)', async () => {
    const file = join(tempDir(), 'unsafe.jsonl');
    const writer = await AppendFile.open(file, { durability: 'none' });
    await writer.appendRecord({ type: 'x.ok', n: Number.MAX_SAFE_INTEGER, id: '99999999999999999999', e: 'e+' });
    const before = readFileSync(file);
    // 2^53 prints as 16 digits, -(2^60) as 19, 1e21 and 1e300 as `1e+21` and `1e+300`.
    for (const bad of [2 ** 53, -(2 ** 60), 1e21, 1e300, -1e21]) {
      // Where a number can stand in the line: a member's value, an array's first and later elements.
      for (const record of [{ bad }, { nested: { list: [bad] } }, { nested: { list: [1, bad] } }]) {
        const error = await writer.appendRecord({ type: 'x.bad', ...record }).catch((e) => e);
        expect(error).toBeInstanceOf(WriterError);
        expect((error as WriterError).code).toBe('invalid_record');
        expect((error as WriterError).message).toMatch(/2\^53/);
      }
    }
    await writer.close();
    expect(readFileSync(file)).toEqual(before);
  });

  it('refuses a record it cannot encode before a closed file, and a record it can with writer_closed', async () => {
    const file = join(tempDir(), 'closed.jsonl');
    const writer = await AppendFile.open(file, { durability: 'none', maxLineBytes: 64 });
    await expect(writer.appendRecord({ type: 'x.long', text: 'x'.repeat(64) })).rejects.toMatchObject({
      code: 'line_too_long',
      file,
    });
    await writer.close();
    await expect(writer.appendRecord([1])).rejects.toMatchObject({ code: 'invalid_record', file });
    await expect(writer.appendRecord({ type: 'x.ok' })).rejects.toMatchObject({ code: 'writer_closed', file });
    expect(readFileSync(file, 'utf8')).toBe('');
  });
});
