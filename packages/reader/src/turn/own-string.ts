import { flatCopy } from './flat-copy.js';

// ES2024 String methods, which Node 20 has but the ES2023 library types do not declare.
type WellFormed = string & { isWellFormed(): boolean; toWellFormed(): string };

/**
 * A copy of a string that shares no memory with the line it was parsed from. V8 may return substrings of the JSON
 * text from JSON.parse; a kept id would then keep the whole line (a message, attachments) alive.
 *
 * The copy is as a UTF-8 round trip would make it: a lone surrogate becomes U+FFFD. It is one flat string, which V8
 * compares quickly: kept ids are compared with every record of their turn.
 */
export function ownString(text: string): string {
  // toWellFormed() replaces lone surrogates as a UTF-8 round trip does, in a new string.
  return (text as WellFormed).isWellFormed() ? flatCopy(text) : (text as WellFormed).toWellFormed();
}
