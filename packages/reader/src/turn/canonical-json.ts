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

/** Compares strings by Unicode code point (as their UTF-8 bytes do), not by UTF-16 code unit. */
export function compareCodePoints(a: string, b: string): number {
  return compareBytes(encoder.encode(a), encoder.encode(b));
}
