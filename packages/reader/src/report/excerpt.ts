import { MAX_EXCERPT_BYTES } from '@turnjournal/schema';

/**
 * The first at most `maxBytes` UTF-8 bytes of a text, cut at a code point boundary, and whether it was cut
 * (spec TJ-AUDIT-012: reports never carry whole messages). A lone surrogate counts as the 3 bytes of the U+FFFD that
 * UTF-8 encoders write for it.
 */
export function excerpt(text: string, maxBytes: number = MAX_EXCERPT_BYTES): { text: string; truncated: boolean } {
  // Every UTF-16 code unit takes one to three UTF-8 bytes (a surrogate pair four for two units), so short texts are
  // decided without counting, and long ones without encoding them.
  if (text.length * 3 <= maxBytes) return { text, truncated: false };
  if (text.length <= maxBytes && Buffer.byteLength(text, 'utf8') <= maxBytes) return { text, truncated: false };
  let end = 0;
  let bytes = 0;
  while (end < text.length) {
    const unit = text.charCodeAt(end);
    let size = unit < 0x80 ? 1 : unit < 0x800 ? 2 : 3;
    let units = 1;
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(end + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        size = 4;
        units = 2;
      }
    }
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += units;
  }
  return { text: text.slice(0, end), truncated: true };
}
