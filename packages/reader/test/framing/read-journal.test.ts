import { propertyParameters } from '@turnjournal/test-support';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ReaderError } from '../../src/index.js';
import { comparable, readAll, summary, tempFile } from '../support/temp.js';

const a = { version: 1, event: 'worker_started', turn_id: 'a', created_at: 1 };
const b = { version: 1, event: 'worker_started', turn_id: 'b', created_at: 2 };
const line = (value: unknown) => `${JSON.stringify(value)}\n`;

describe('readJournal framing (spec §3)', () => {
  it('splits on LF only: U+2028, U+2029 and U+0085 are content (TJ-FRAME-001, TJ-FRAME-002)', async () => {
    const value = { ...a, note: 'x\u2028y\u2029z\u0085w' };
    const raw = `{"version":1,"event":"worker_started","turn_id":"a","created_at":1,"note":"x\u2028y\u2029z\u0085w"}\n`;
    // Read as content; a raw U+2028 is only reported as what a writer should have escaped (TJ-FRAME-007, TJ-FAM-026).
    expect(summary(await readAll(tempFile(raw)))).toEqual({
      records: [value],
      findings: ['writer_violation_unescaped_separator@1'],
    });
  });

  it('ignores a torn tail even when it is a complete object, and reports its offset and length (TJ-FRAME-003, TJ-FRAME-004)', async () => {
    const items = await readAll(tempFile(`${line(a)}${JSON.stringify(b)}`));
    expect(summary(items).records).toEqual([a]);
    const tail = items.find((i) => i.kind === 'finding');
    expect(tail?.kind === 'finding' && tail.finding).toMatchObject({
      code: 'torn_tail',
      offset: line(a).length,
      length: JSON.stringify(b).length,
    });
  });

  it('skips a BOM at offset 0 and a CR before LF, and reports blank lines (TJ-FRAME-012..014)', async () => {
    const raw = `\uFEFF${JSON.stringify(a)}\r\n\n  \t\n${line(b)}`;
    expect(summary(await readAll(tempFile(raw)))).toEqual({
      records: [a, b],
      // Both are read; the BOM and the CR LF are each reported once as a writer violation (TJ-FAM-026).
      findings: ['writer_violation_bom@1', 'writer_violation_crlf@1', 'blank_line@2', 'blank_line@3'],
    });
  });

  it('treats a BOM after offset 0 as damage: a head that tolerant mode discards and prefix mode stops at', async () => {
    const path = tempFile(`${line(a)}\uFEFF${line(b)}`);
    expect(summary(await readAll(path))).toEqual({ records: [a, b], findings: ['glued_record@2'] });
    expect(summary(await readAll(path, { mode: 'prefix' }))).toEqual({ records: [a], findings: ['malformed_line@2'] });
  });

  it('reports invalid UTF-8, non-JSON and non-object lines with line and offset, and reads on (TJ-FRAME-015, TJ-FRAME-016)', async () => {
    const bytes = Buffer.concat([
      Buffer.from(line(a)),
      Buffer.from([0xc0, 0xaf, 0x0a]),
      Buffer.from('nope\n[1]\n"s"\n'),
      Buffer.from(line(b)),
    ]);
    const items = await readAll(tempFile(bytes));
    expect(summary(items)).toEqual({
      records: [a, b],
      findings: ['malformed_line@2', 'malformed_line@3', 'malformed_line@4', 'malformed_line@5'],
    });
    const offsets = items.flatMap((i) => (i.kind === 'finding' ? [i.finding.offset] : []));
    expect(offsets).toEqual([line(a).length, line(a).length + 3, line(a).length + 8, line(a).length + 12]);
  });

  it('salvages a record glued after a torn head and reports the head (TJ-FRAME-025..027)', async () => {
    const head = '{"version":1,"event":"submitted","turn_id":"x","con';
    const items = await readAll(tempFile(`${line(a)}${head}${line(b)}`));
    expect(summary(items)).toEqual({ records: [a, b], findings: ['glued_record@2'] });
    const glued = items.find((i) => i.kind === 'finding');
    expect(glued?.kind === 'finding' && glued.finding.length).toBe(head.length);
  });

  it('reports a glued line as malformed when the caller turns salvage off', async () => {
    const items = await readAll(tempFile(`{"torn${line(b)}`), { salvage: false });
    expect(summary(items)).toEqual({ records: [], findings: ['malformed_line@1'] });
  });

  it('never recovers a complete object from the head of a glued line', async () => {
    const items = await readAll(tempFile(`${JSON.stringify(a)}${line(b)}`));
    expect(summary(items)).toEqual({ records: [b], findings: ['glued_record@1'] });
  });

  it('does not salvage in prefix or strict mode', async () => {
    const raw = `{"torn${line(b)}${line(a)}`;
    expect(summary(await readAll(tempFile(raw), { mode: 'prefix' }))).toEqual({
      records: [],
      findings: ['malformed_line@1'],
    });
    await expect(readAll(tempFile(raw), { mode: 'strict' })).rejects.toThrow(ReaderError);
  });

  it('salvages in linear time on a hostile line full of {"', async () => {
    const hostile = `${'{"'.repeat(200_000)}\n`;
    const items = await readAll(tempFile(hostile));
    expect(summary(items).findings).toEqual(['malformed_line@1']);
  });

  it('reports a NUL run as zero_filled_region at the run, and salvages after it (TJ-FRAME-028, TJ-FRAME-029)', async () => {
    const zeros = Buffer.alloc(16);
    const items = await readAll(
      tempFile(Buffer.concat([Buffer.from(line(a)), zeros, Buffer.from(line(b)), zeros, Buffer.from('\n')])),
    );
    expect(summary(items)).toEqual({ records: [a, b], findings: ['zero_filled_region@2', 'zero_filled_region@3'] });
    const first = items.find((i) => i.kind === 'finding');
    expect(first?.kind === 'finding' && first.finding).toMatchObject({ offset: line(a).length, length: 16 });
  });

  it('reports NULs after the last LF as part of a torn tail when other bytes follow them, and as nothing when they reach the end (TJ-FRAME-030, TJ-FRAME-036)', async () => {
    const torn = Buffer.concat([Buffer.from(line(a)), Buffer.alloc(4096), Buffer.from('{"v')]);
    expect(summary(await readAll(tempFile(torn)))).toEqual({ records: [a], findings: ['torn_tail@-'] });
    const space = Buffer.concat([Buffer.from(line(a)), Buffer.alloc(4096)]);
    expect(summary(await readAll(tempFile(space)))).toEqual({ records: [a], findings: [] });
  });

  it('skips a line over the limit without failing, and reads on (TJ-FRAME-031, TJ-FRAME-032)', async () => {
    const big = { ...a, pad: 'x'.repeat(5000) };
    const items = await readAll(tempFile(`${line(big)}${line(b)}`), { maxLineBytes: 1000, chunkBytes: 256 });
    expect(summary(items)).toEqual({ records: [b], findings: ['oversized_line@1'] });
  });

  it('keeps the last of duplicate member names (TJ-FRAME-011)', async () => {
    const items = await readAll(
      tempFile('{"version":1,"event":"worker_started","turn_id":"a","turn_id":"z","created_at":1}\n'),
    );
    expect(summary(items).records).toEqual([{ ...a, turn_id: 'z' }]);
  });

  it('stops at the first damage in prefix mode and fails with code, file, line and offset in strict mode (TJ-FRAME-021..023)', async () => {
    const path = tempFile(`${line(a)}garbage\n${line(b)}`);
    expect(summary(await readAll(path, { mode: 'prefix' }))).toEqual({ records: [a], findings: ['malformed_line@2'] });
    const error = await readAll(path, { mode: 'strict' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ReaderError);
    expect(error).toMatchObject({ code: 'malformed_line', file: path, line: 2, offset: line(a).length });
  });

  it('fails on an invalid record only in strict mode; other modes report it and read on', async () => {
    const path = tempFile(`${line({ ...a, created_at: 'yesterday' })}${line(b)}`);
    expect(summary(await readAll(path)).findings).toEqual(['invalid_record@1']);
    expect(summary(await readAll(path, { mode: 'prefix' })).findings).toEqual(['invalid_record@1']);
    await expect(readAll(path, { mode: 'strict' })).rejects.toMatchObject({ code: 'invalid_record', line: 1 });
  });

  it('never treats a torn tail as damage, in any mode (TJ-FRAME-024)', async () => {
    const path = tempFile(`${line(a)}{"ver`);
    for (const mode of ['tolerant', 'prefix', 'strict'] as const) {
      expect(summary(await readAll(path, { mode }))).toEqual({ records: [a], findings: ['torn_tail@-'] });
    }
  });
});

describe('readJournal properties', () => {
  const records = fc.array(
    fc.record({
      version: fc.constant(1),
      event: fc.constant('worker_started'),
      turn_id: fc.string({ minLength: 1, maxLength: 12 }),
      created_at: fc.double({ noNaN: true, noDefaultInfinity: true }),
    }),
    { minLength: 1, maxLength: 12 },
  );

  it('any cut of a valid file reads as exactly the complete lines before the cut', async () => {
    await fc.assert(
      fc.asyncProperty(records, fc.nat(), async (values, cutSeed) => {
        const bytes = Buffer.from(values.map(line).join(''));
        const cut = cutSeed % (bytes.length + 1);
        const prefix = bytes.subarray(0, cut);
        const committed = prefix.toString('utf8').split('\n').slice(0, -1).length;
        const items = await readAll(tempFile(prefix));
        const got = summary(items);
        expect(got.records).toEqual(values.slice(0, committed).map((v) => JSON.parse(JSON.stringify(v))));
        expect(got.findings).toEqual(prefix.length > 0 && prefix[prefix.length - 1] !== 0x0a ? ['torn_tail@-'] : []);
      }),
      propertyParameters(),
    );
  });

  it('reports the first raw U+2028 or U+2029 of a file at its byte, whatever the chunk size (TJ-FRAME-007)', async () => {
    // Characters whose UTF-8 starts with E2 (U+2028, U+2029, an em dash, a check mark) and others, so separators fall
    // on both sides of chunk boundaries and in lines that span chunks; a chunk that holds none skips the search.
    const text = fc.array(fc.constantFrom('a', 'é', '\u2028', '\u2029', '\u2014', '\u2705', '\u2026', '中'), {
      maxLength: 12,
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(text, { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 64 }),
        async (notes, chunkBytes) => {
          const raw = notes.map((note) => line({ ...a, note: note.join('') })).join('');
          const bytes = Buffer.from(raw);
          const at = [bytes.indexOf(Buffer.from('\u2028')), bytes.indexOf(Buffer.from('\u2029'))].filter((i) => i >= 0);
          const first = at.length === 0 ? -1 : Math.min(...at);
          // The line holding that byte: one more than the LFs before it.
          const expected =
            first < 0 ? [] : [{ line: bytes.subarray(0, first).toString().split('\n').length, byte: first }];
          const path = tempFile(bytes);
          for (const options of [{ chunkBytes }, {}]) {
            const found = (await readAll(path, options)).flatMap((item) =>
              item.kind === 'finding' && item.finding.code === 'writer_violation_unescaped_separator'
                ? [{ line: item.finding.line, byte: Number(/at byte (\d+)/.exec(item.finding.message)?.[1]) }]
                : [],
            );
            expect(found).toEqual(expected);
          }
        },
      ),
      propertyParameters(),
    );
  });

  it('the chunk size never changes what is read', async () => {
    await fc.assert(
      fc.asyncProperty(records, fc.integer({ min: 1, max: 64 }), async (values, chunkBytes) => {
        const path = tempFile(`${values.map(line).join('')}junk\n{"torn`);
        expect(comparable(await readAll(path, { chunkBytes }))).toEqual(comparable(await readAll(path)));
      }),
      propertyParameters(),
    );
  });
});
