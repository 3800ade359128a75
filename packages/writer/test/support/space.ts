import { readFileSync } from 'node:fs';

/**
 * The bytes of a journal without the pre-allocated space at its end (spec §3.8): the NUL bytes that end the file. A
 * test that reads a file its writer still holds open sees that space; the lines are what it means to compare.
 */
export function withoutSpace(bytes: Uint8Array): Buffer {
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] === 0) end -= 1;
  return Buffer.from(bytes.buffer, bytes.byteOffset, end);
}

/** The file's bytes without its pre-allocated space (see {@link withoutSpace}). */
export function readLinesOf(file: string): Buffer {
  return withoutSpace(readFileSync(file));
}
