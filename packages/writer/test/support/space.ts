import { readFileSync } from 'node:fs';
import { trailingNulCount } from '@turnjournal/reader/store-format';

/**
 * The bytes of a journal without the pre-allocated space at its end (spec §3.8): the NUL bytes that end the file. A
 * test that reads a file its writer still holds open sees that space; the lines are what it means to compare.
 */
export function withoutSpace(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length - trailingNulCount(bytes));
}

/** The file's bytes without its pre-allocated space (see {@link withoutSpace}). */
export function readLinesOf(file: string): Buffer {
  return withoutSpace(readFileSync(file));
}
