import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { VERDICT_DEF_NAMES } from '../../src/v1/index.js';

/** The committed spec/v1/schema.json. */
export const committedSchema = JSON.parse(
  readFileSync(join(import.meta.dirname, '../../../../spec/v1/schema.json'), 'utf8'),
) as { $id: string };

/**
 * The verdict table of spec §9.6, applied with a stock JSON Schema validator (ajv) and nothing but schema.json: what
 * an implementer in another language does to reproduce `validateRecord`.
 */
export function schemaVerdictFunction(document: { $id: string } = committedSchema): (value: unknown) => string {
  const ajv = new Ajv2020({ strict: true });
  ajv.addSchema(document);
  const get = (pointer: string) => {
    const validate = ajv.getSchema(`${document.$id}${pointer}`);
    if (validate === undefined) throw new Error(`schema.json has nothing at ${pointer}`);
    return validate;
  };
  const root = get('');
  const unsupported = get(`#/$defs/${VERDICT_DEF_NAMES.unsupportedVersion}`);
  const extension = get(`#/$defs/${VERDICT_DEF_NAMES.extension}`);
  const unknown = get(`#/$defs/${VERDICT_DEF_NAMES.unknown}`);
  return (value) => {
    if (unsupported(value)) return 'unsupported_version';
    if (!root(value)) return 'invalid';
    if (extension(value)) return 'extension';
    if (unknown(value)) return 'unknown';
    return 'valid';
  };
}
