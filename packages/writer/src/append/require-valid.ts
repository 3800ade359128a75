import { validateRecord } from '@turnjournal/schema';
import { WriterError } from '../errors.js';

/**
 * Checks a record the writer is about to append against the v1 schema of `type`: a writer never writes a record that
 * a reader would report as `invalid_record`. Throws a {@link WriterError} (`invalid_record`) listing the errors.
 */
export function requireValidRecord(record: Record<string, unknown>, type: string, file?: string): void {
  const validation = validateRecord(record);
  const classification = validation.classification;
  const actual = classification.family === 'none' ? undefined : classification.type;
  if (validation.status === 'valid' && actual === type) return;
  const detail =
    validation.status === 'invalid'
      ? validation.errors.map((error) => error.message).join('; ')
      : `it validates as ${validation.status} ${actual ?? ''}`;
  throw new WriterError('invalid_record', `refusing to write an invalid "${type}" record: ${detail}`, file);
}
