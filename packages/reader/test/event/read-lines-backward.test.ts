import { type FileHandle, open } from 'node:fs/promises';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type BackwardLine, type ReadCounter, readLinesBackward } from '../../src/event/read-lines-backward.js';
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
    const counter: ReadCounter = { bytesRead: 0 };
    const lines: BackwardLine[] = [];
    for await (const l of readLinesBackward(sourceOf(handle), size, chunkBytes, maxLineBytes, counter)) lines.push(l);
    return { lines, bytesRead: counter.bytesRead, spaceStart: counter.spaceStart };
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

  it('steps over the pre-allocated space at the end and says where it starts (TJ-FRAME-036)', async () => {
    const lines = [
      { kind: 'line', offset: 2, hex: Buffer.from('bb').toString('hex') },
      { kind: 'line', offset: 0, hex: Buffer.from('a').toString('hex') },
    ];
    for (const chunkBytes of [1, 3, 64, 5000]) {
      // Space alone, after the last LF.
      const space = await backward(
        tempFile(Buffer.concat([Buffer.from('a\nbb\n'), Buffer.alloc(4100)])),
        chunkBytes,
        100,
      );
      expect(space.lines.map(plain)).toEqual(lines);
      expect(space.spaceStart).toBe(5);
      // A torn tail (with a NUL run inside it) before the space: the space starts after its last byte that is not NUL.
      const torn = Buffer.concat([Buffer.from('a\nbb\n{"t'), Buffer.alloc(7), Buffer.from('x'), Buffer.alloc(4100)]);
      const tornRead = await backward(tempFile(torn), chunkBytes, 100);
      expect(tornRead.lines.map(plain)).toEqual(lines);
      expect(tornRead.spaceStart).toBe(5 + 3 + 7 + 1);
      // Only NUL bytes: the space starts at 0, and there is no line.
      const empty = await backward(tempFile(Buffer.alloc(4100)), chunkBytes, 100);
      expect(empty).toEqual({ lines: [], bytesRead: 4100, spaceStart: 0 });
    }
    // No space: it starts at the end.
    expect((await backward(tempFile('a\nbb\n'), 2, 100)).spaceStart).toBe(5);
    expect((await backward(tempFile('a\nbb\nc'), 2, 100)).spaceStart).toBe(6);
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
