/**
 * A canonical text of a JSON value: object members sorted by name, numbers in shortest form. Two values are "equal as
 * JSON values" (spec §4.6) exactly when their canonical texts are equal.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
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
