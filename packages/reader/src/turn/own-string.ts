/**
 * A copy of a string that shares no memory with the line it was parsed from. V8 may return substrings of the JSON
 * text from JSON.parse; a kept id would then keep the whole line (a message, attachments) alive.
 */
export function ownString(text: string): string {
  return Buffer.from(text, 'utf8').toString('utf8');
}
