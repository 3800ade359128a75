import { createHash } from 'node:crypto';

/**
 * A canonical text of a JSON value: object members sorted by name, numbers in shortest form. Two values are "equal as
 * JSON values" (spec §4.6) exactly when their canonical texts are equal. Nesting depth is bounded by memory only: a
 * record may nest far deeper than the call stack allows (see writeCanonical).
 */
export function canonicalJson(value: unknown): string {
  const pieces: string[] = [];
  writeCanonical(value, (piece) => pieces.push(piece));
  return pieces.join('');
}

/** Bytes of a {@link canonicalDigest}. */
export const CANONICAL_DIGEST_BYTES = 16;

// Pieces are handed to the hash in batches: one update per piece would cost more than the hashing.
const HASH_BATCH_CHARS = 32 * 1024;

/**
 * The first {@link CANONICAL_DIGEST_BYTES} bytes of the SHA-256 of a value's canonical text: values equal as JSON values
 * have equal digests, and finding two different values with equal digests takes about 2^64 hash computations, so a
 * digest stands for the value. The canonical text is hashed as it is written, never held whole. Internal to the reader.
 */
export function canonicalDigest(value: unknown): Buffer {
  const hash = createHash('sha256');
  let batch = '';
  writeCanonical(value, (piece) => {
    batch += piece;
    if (batch.length >= HASH_BATCH_CHARS) {
      hash.update(batch, 'utf8');
      batch = '';
    }
  });
  hash.update(batch, 'utf8');
  return hash.digest().subarray(0, CANONICAL_DIGEST_BYTES);
}

/** An array or object being written: its members, and the index of the next one. */
interface Open {
  readonly array: readonly unknown[] | undefined;
  readonly object: Record<string, unknown> | undefined;
  readonly keys: readonly string[] | undefined;
  readonly length: number;
  index: number;
}

/**
 * Writes the canonical text of a value in pieces, depth first, with a stack of its own instead of recursion: a record
 * nested thousands of levels deep (which `JSON.parse` accepts) must not overflow the call stack (issue 11, defect 0).
 */
function writeCanonical(value: unknown, write: (piece: string) => void): void {
  const open: Open[] = [];
  let next = value;
  for (;;) {
    if (Array.isArray(next)) {
      write('[');
      open.push({ array: next, object: undefined, keys: undefined, length: next.length, index: 0 });
    } else if (typeof next === 'object' && next !== null) {
      const object = next as Record<string, unknown>;
      const keys = Object.keys(object).sort();
      write('{');
      open.push({ array: undefined, object, keys, length: keys.length, index: 0 });
    } else {
      write(JSON.stringify(next) ?? 'null');
    }
    // Close every finished container, then move to the next member of the innermost open one.
    let top = open.at(-1);
    while (top !== undefined && top.index === top.length) {
      write(top.keys === undefined ? ']' : '}');
      open.pop();
      top = open.at(-1);
    }
    if (top === undefined) return;
    if (top.index > 0) write(',');
    if (top.keys !== undefined) {
      const key = top.keys[top.index] as string;
      write(`${JSON.stringify(key)}:`);
      next = (top.object as Record<string, unknown>)[key];
    } else {
      next = (top.array as readonly unknown[])[top.index];
    }
    top.index += 1;
  }
}

/** Compares byte strings in unsigned bytewise order: negative, zero or positive. */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i += 1) {
    const d = (a[i] as number) - (b[i] as number);
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

const encoder = new TextEncoder();

/**
 * Compares strings by Unicode code point (as their UTF-8 bytes do), not by UTF-16 code unit. Lone surrogates compare
 * as the U+FFFD that UTF-8 encoding writes for them.
 */
export function compareCodePoints(a: string, b: string): number {
  // Up to the first differing code unit both strings hold the same units, hence the same UTF-8 bytes. When both
  // differing units are below the surrogates, they are whole code points and decide the order as their bytes would.
  // Anything involving surrogates, or a prefix ending in a high surrogate, is decided by encoding.
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i += 1;
  if (i < n) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x < 0xd800 && y < 0xd800) return x - y;
  } else if (n === 0 || !isHighSurrogate(a.charCodeAt(n - 1))) {
    return a.length - b.length;
  }
  return compareBytes(encoder.encode(a), encoder.encode(b));
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}
