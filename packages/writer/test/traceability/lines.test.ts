// Coverage of the writer's line-encoding rules (spec §3.1, §3.7) against the reference writer.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_LINE_BYTES,
  openEventLog,
  openRunWriter,
  openTurnJournal,
  WriterError,
} from '../support/internals.js';
import { tempDir } from '../support/temp.js';

/**
 * The member names of every object in a JSON text that appear twice in that object. `JSON.parse` silently keeps the
 * last duplicate, so a writer bug that emitted one would go unseen without this scan.
 */
function duplicateMembers(text: string): string[] {
  const duplicates: string[] = [];
  let i = 0;
  const ws = () => {
    while (i < text.length && ' \t\r\n'.includes(text[i] as string)) i++;
  };
  const string = (): string => {
    const start = i;
    i++;
    while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const seen = new Set<string>();
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        const key = string();
        if (seen.has(key)) duplicates.push(key);
        seen.add(key);
        ws();
        i++; // ':'
        value();
        ws();
        if (text[i++] === '}') return;
      }
    } else if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value();
        ws();
        if (text[i++] === ']') return;
      }
    } else if (c === '"') string();
    else while (i < text.length && !',]} \t\r\n'.includes(text[i] as string)) i++;
  };
  value();
  return duplicates;
}

function lines(path: string): Buffer[] {
  const bytes = readFileSync(path);
  const out: Buffer[] = [];
  let start = 0;
  for (let lf = bytes.indexOf(0x0a); lf !== -1; lf = bytes.indexOf(0x0a, start)) {
    out.push(bytes.subarray(start, lf));
    start = lf + 1;
  }
  return out;
}

describe('writer line encoding (spec §3.1, §3.7)', () => {
  it('writes every line as well-formed UTF-8: multi-byte text byte for byte, lone surrogates escaped (TJ-FRAME-006)', async () => {
    const dir = tempDir();
    const journal = await openTurnJournal({ dir, sessionId: 's1' });
    const text = 'naïve 日本語 🎉 Ω';
    await journal.submit({ content: text, turnId: 't1' });
    await journal.submit({ content: 'broken \ud800 pair \udfff', turnId: 't2' });
    await journal.close();
    const written = lines(join(dir, 's1.jsonl'));
    expect(written).toHaveLength(2);
    const strict = new TextDecoder('utf-8', { fatal: true });
    for (const line of written) expect(() => strict.decode(line)).not.toThrow();
    // The text is stored as its UTF-8 bytes, not as \u escapes or another encoding.
    expect(written[0]?.includes(Buffer.from(text, 'utf8'))).toBe(true);
    // A lone surrogate cannot be encoded in UTF-8: it is written as a JSON escape and reads back unchanged.
    expect(written[1]?.toString('utf8')).toContain('\\ud800');
    expect(JSON.parse(strict.decode(written[1])).content).toBe('broken \ud800 pair \udfff');
  });

  it('never writes an object with duplicate member names, even when the caller passes extra members (TJ-FRAME-010)', async () => {
    const dir = tempDir();
    const journal = await openTurnJournal({ dir, sessionId: 's1' });
    await journal.submit({ content: 'hi', turnId: 't1', extra: { x_note: { a: 1, nested: [{ b: 2 }] } } });
    await expect(journal.submit({ content: 'hi', turnId: 't2', extra: { content: 'other' } })).rejects.toMatchObject({
      code: 'invalid_record',
      message: 'extra member "content" would redefine a submitted field',
    });
    await expect(journal.submit({ content: 'hi', turnId: 't3', extra: { turn_id: 'other' } })).rejects.toMatchObject({
      code: 'invalid_record',
      message: 'extra member "turn_id" would redefine a submitted field',
    });
    await journal.complete('t1');
    await journal.close();
    const logDir = tempDir();
    const log = await openEventLog({ root: logDir, sessionId: 's1' });
    await log.appendMessage({ role: 'user', content: 'hello', seq: 'not the envelope seq' } as never);
    await log.append('x.example.note', { seq: 1, type: 'inner', payload: { ts: 'x' } });
    await log.close();
    const written = [...lines(join(dir, 's1.jsonl')), ...lines(join(logDir, 's1', 'events.jsonl'))];
    expect(written.length).toBeGreaterThanOrEqual(4);
    for (const line of written) expect(duplicateMembers(line.toString('utf8'))).toEqual([]);
    expect(duplicateMembers('{"a":1,"b":{"a":2},"a":3}')).toEqual(['a']);
  });

  it('refuses an integer outside ±(2^53-1) and writes nothing; the largest safe integers are written (TJ-FRAME-035)', async () => {
    const dir = tempDir();
    const journal = await openTurnJournal({ dir, sessionId: 's1' });
    await journal.submit({
      content: 'hi',
      turnId: 't1',
      extra: { x_big: Number.MAX_SAFE_INTEGER, x_small: Number.MIN_SAFE_INTEGER },
    });
    const before = readFileSync(join(dir, 's1.jsonl'));
    for (const [n, bad] of [2 ** 53, -(2 ** 53), 2 ** 60, 1e300].entries()) {
      const error = await journal.submit({ content: 'x', turnId: `t-${n}`, extra: { x_big: bad } }).catch((e) => e);
      expect(error).toBeInstanceOf(WriterError);
      expect((error as WriterError).code).toBe('invalid_record');
    }
    await expect(journal.assistantStarted('t1', { assistantMessageIndex: 2 ** 53 })).rejects.toThrow(/2\^53/);
    expect(readFileSync(join(dir, 's1.jsonl'))).toEqual(before);
    await journal.close();
    expect(readFileSync(join(dir, 's1.jsonl'), 'utf8')).toContain(`"x_big":${Number.MAX_SAFE_INTEGER}`);
    // The event log and run writers share the rule.
    const root = tempDir();
    const log = await openEventLog({ root, sessionId: 's1' });
    await expect(log.append('x.acme.note', { n: 2 ** 53 })).rejects.toMatchObject({ code: 'invalid_record' });
    await log.append('x.acme.note', { n: Number.MAX_SAFE_INTEGER });
    await log.close();
    const run = await openRunWriter({ root, runId: 'r1', header: { startedAt: '2026-05-11T00:00:00Z' } });
    await expect(run.context(50, { meta: { tokens: 2 ** 60 } })).rejects.toMatchObject({ code: 'invalid_record' });
    await run.close();
    expect(readFileSync(join(root, 's1', 'events.jsonl'), 'utf8')).toContain(`"n":${Number.MAX_SAFE_INTEGER}`);
    expect(readFileSync(run.path, 'utf8')).not.toContain('run.context');
  });

  it('by default refuses, writing nothing, a record whose line exceeds 16 MiB, the readers’ default limit (TJ-DUR-028, TJ-FRAME-034)', async () => {
    expect(DEFAULT_MAX_LINE_BYTES).toBe(16 * 1024 * 1024);
    const dir = tempDir();
    const journal = await openTurnJournal({ dir, sessionId: 's1' });
    await journal.submit({ content: 'small', turnId: 't1' });
    const before = readFileSync(join(dir, 's1.jsonl'));
    const error = await journal.submit({ content: 'x'.repeat(DEFAULT_MAX_LINE_BYTES), turnId: 't2' }).catch((e) => e);
    expect(error).toBeInstanceOf(WriterError);
    expect((error as WriterError).code).toBe('line_too_long');
    expect((error as Error).message).toMatch(/line-size limit/);
    expect(readFileSync(join(dir, 's1.jsonl'))).toEqual(before);
    // The writer is still usable, and the refused turn was never recorded.
    await journal.submit({ content: 'after', turnId: 't3' });
    expect(journal.stateOf('t2')).toBeUndefined();
    await journal.close();
  });
});
