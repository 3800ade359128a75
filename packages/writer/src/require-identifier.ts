import { explainInvalidIdentifier, isValidIdentifier } from '@turnjournal/reader/store-format';
import { WriterError } from './errors.js';

/**
 * Throws `invalid_identifier` unless `id` is a valid identifier (spec §4.3). Called before any path is built from an
 * id, so that `../x`, `a/b`, `..`, an empty id, a control character or `~` never reach the file system (TJ-FAM-010).
 */
export function requireIdentifier(id: unknown, what: string): asserts id is string {
  if (typeof id !== 'string' || !isValidIdentifier(id))
    throw new WriterError(
      'invalid_identifier',
      `the ${what} is not a valid identifier (1-128 of A-Z a-z 0-9 . _ -, not "." or ".."): ${
        typeof id === 'string' ? explainInvalidIdentifier(id) : `got ${typeof id}`
      }`,
    );
}
