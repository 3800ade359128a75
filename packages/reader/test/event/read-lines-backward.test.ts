import { type FileHandle, open } from 'node:fs/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type BackwardLine, readLinesBackward } from '../../src/event/read-lines-backward.js';
import { LineSplitter } from '../../src/framing/line-splitter.js';
import { tempFile } from '../support/temp.js';
import { PROPERTY, PROPERTY_TIMEOUT } from './event-log.js';

function sourceOf(handle: FileHandle) {
  return {
    read: async (buffer: Uint8Array, offset: number, length: number, position: number) =>
      (await handle.read(buffer, offset, length, position)).bytesRead,
  };
}

async function backward(path: string, chunkBytes: number, maxLineBytes: number) {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    const counter = { bytesRead: 0 };
    const lines: BackwardLine[] = [];
    for await (const l of readLinesBackward(sourceOf(handle), size, chunkBytes, maxLineBytes, counter)) lines.push(l);
    return { lines, bytesRead: counter.bytesRead };
  } finally {
    await handle.close();
  }
}

const plain = (l: BackwardLine | ReturnType<LineSplitter['push']>[number]) =>
  l.kind === 'oversized'
    ? { kind: 'oversized', offset: l.offset, length: l.length }
    : { kind: 'line', offset: l.offset, hex: Buffer.from(l.bytes).toString('hex') };

describe('readLinesBackward', () => {
  it('yields committed lines last first and skips the torn tail (TJ-REPLAY-006)', async () => {
    const { lines } = await backward(tempFile('a\nbb\n\nccc\ntorn'), 2, 100);
    expect(lines.map(plain)).toEqual([
      { kind: 'line', offset: 6, hex: Buffer.from('ccc').toString('hex') },
      { kind: 'line', offset: 5, hex: '' },
      { kind: 'line', offset: 2, hex: Buffer.from('bb').toString('hex') },
      { kind: 'line', offset: 0, hex: Buffer.from('a').toString('hex') },
    ]);
  });

  it('reads only the chunks it needs when the caller stops early', async () => {
    const path = tempFile(`${'x'.repeat(10_000)}\nlast\n`);
    const handle = await open(path, 'r');
    const counter = { bytesRead: 0 };
    try {
      for await (const l of readLinesBackward(sourceOf(handle), 10_006, 16, 1 << 20, counter)) {
        expect(plain(l)).toMatchObject({ offset: 10_001 });
        break;
      }
    } finally {
      await handle.close();
    }
    expect(counter.bytesRead).toBeLessThanOrEqual(32);
  });

  it(
    'yields the lines LineSplitter yields, reversed, for any bytes, chunk size and limit (TJ-FRAME-032)',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.constantFrom('a', 'bc', '\n', '\r', 'é', '\u0000', 'xxxxxxx'), { maxLength: 40 }),
          fc.integer({ min: 1, max: 9 }),
          fc.integer({ min: 1, max: 12 }),
          async (parts, chunkBytes, maxLineBytes) => {
            const content = Buffer.from(parts.join(''));
            const splitter = new LineSplitter(maxLineBytes);
            const forward = splitter.push(content).map(plain);
            const { lines, bytesRead } = await backward(tempFile(content), chunkBytes, maxLineBytes);
            expect(lines.map(plain)).toEqual(forward.reverse());
            expect(bytesRead).toBe(content.length);
          },
        ),
        PROPERTY,
      );
    },
    PROPERTY_TIMEOUT,
  );
});
