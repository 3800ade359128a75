import { MAX_EXCERPT_BYTES } from '@turnjournal/schema';

const encoder = new TextEncoder();

/**
 * The first at most `maxBytes` UTF-8 bytes of a text, cut at a code point boundary, and whether it was cut
 * (spec TJ-AUDIT-012: reports never carry whole messages).
 */
export function excerpt(text: string, maxBytes: number = MAX_EXCERPT_BYTES): { text: string; truncated: boolean } {
  if (encoder.encode(text).length <= maxBytes) return { text, truncated: false };
  let out = '';
  let bytes = 0;
  for (const char of text) {
    const size = encoder.encode(char).length;
    if (bytes + size > maxBytes) break;
    out += char;
    bytes += size;
  }
  return { text: out, truncated: true };
}
