/** Longest valid identifier (spec §4.3). */
export const MAX_IDENTIFIER_LENGTH = 128;

const IDENTIFIER = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * True when the string is a valid identifier (spec §4.3): 1 to 128 characters from `A-Z a-z 0-9 . _ -`, and neither
 * `.` nor `..`. Such an id contains no path separator, control character or `~`, so it is safe in a file name.
 */
export function isValidIdentifier(id: string): boolean {
  return IDENTIFIER.test(id) && id !== '.' && id !== '..';
}

/** Why an id is not a valid identifier, for findings; the id itself is shown escaped and truncated. */
export function explainInvalidIdentifier(id: string): string {
  const shown = JSON.stringify(id.length > 40 ? `${id.slice(0, 40)}…` : id);
  if (id.length === 0) return 'the id is empty';
  if (id.length > MAX_IDENTIFIER_LENGTH)
    return `the id ${shown} is ${id.length} characters long (at most ${MAX_IDENTIFIER_LENGTH})`;
  if (id === '.' || id === '..') return `the id ${shown} is a path component`;
  if (/[/\\]/.test(id)) return `the id ${shown} contains a path separator`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what this detects.
  if (/[\u0000-\u001f\u007f]/.test(id)) return `the id ${shown} contains a control character`;
  if (id.includes('~')) return `the id ${shown} contains "~", which separates the shard in file names`;
  return `the id ${shown} contains characters outside A-Z a-z 0-9 . _ -`;
}
