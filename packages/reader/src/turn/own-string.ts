const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * A copy of a string that shares no memory with the line it was parsed from. V8 may return substrings of the JSON
 * text from JSON.parse; a kept id would then keep the whole line (a message, attachments) alive.
 *
 * The copy goes through UTF-8, so a lone surrogate becomes U+FFFD. A text without surrogates is the same after that
 * round trip, so it is copied without encoding: a concatenation, flattened by `slice`, is new memory.
 */
export function ownString(text: string): string {
  if (SURROGATE.test(text)) return Buffer.from(text, 'utf8').toString('utf8');
  return ` ${text}`.slice(1);
}
