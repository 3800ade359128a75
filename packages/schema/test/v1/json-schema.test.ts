import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { buildJsonSchema, SCHEMA_ID } from '../../src/v1/index.js';

const committed = JSON.parse(readFileSync(join(import.meta.dirname, '../../../../spec/v1/schema.json'), 'utf8'));

describe('spec/v1/schema.json', () => {
  it('is what the TypeBox source generates', () => {
    expect(committed).toEqual(buildJsonSchema());
  });

  it('compiles under ajv 2020-12 in strict mode and carries its $id', () => {
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    const validate = ajv.compile(committed);
    expect(committed.$id).toBe(SCHEMA_ID);
    expect(validate({ type: 'x.acme.note', note: 'hi' })).toBe(true);
  });
});
