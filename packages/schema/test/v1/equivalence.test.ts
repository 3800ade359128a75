import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { propertyParameters } from '@turnjournal/test-support';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compiledValidator, isAcceptedRecord, RECORD_DEFINITIONS, validateRecord } from '../../src/v1/index.js';
import { arbitraryDeepMutation, arbitraryFor } from '../support/arbitrary.js';
import { schemaVerdictFunction } from '../support/schema-verdict.js';

// The published JSON Schema must mean what the TypeBox validators mean: an implementer in another language who uses
// schema.json must accept and reject exactly the records the reference accepts and rejects.
const document = JSON.parse(readFileSync(join(import.meta.dirname, '../../../../spec/v1/schema.json'), 'utf8'));
const ajv = new Ajv2020({ strict: true, allErrors: false });
ajv.addSchema(document);
const ajvRoot = ajv.getSchema(document.$id);
if (ajvRoot === undefined) throw new Error('schema.json did not compile');
const ajvDef = (name: string) => {
  const validate = ajv.getSchema(`${document.$id}#/$defs/${name}`);
  if (validate === undefined) throw new Error(`no $defs/${name} in schema.json`);
  return validate;
};

const schemaVerdict = schemaVerdictFunction(document);

describe.each(RECORD_DEFINITIONS.map((d) => [d.name, d] as const))('%s', (_name, definition) => {
  const valid = arbitraryFor(JSON.parse(JSON.stringify(definition.schema)));
  const typebox = compiledValidator(definition.schema);
  const viaAjv = ajvDef(definition.name);

  it('generated records are valid for TypeBox, for its ajv $def and for the schema.json root', () => {
    fc.assert(
      fc.property(valid, (record) => {
        expect(typebox.Check(record)).toBe(true);
        expect(viaAjv(record)).toBe(true);
        expect(ajvRoot(record)).toBe(true);
        expect(validateRecord(record).status).toBe('valid');
      }),
      propertyParameters(),
    );
  });

  it('ajv and TypeBox agree on mutated records', () => {
    fc.assert(
      fc.property(valid, fc.array(arbitraryDeepMutation(), { minLength: 1, maxLength: 3 }), (record, mutations) => {
        const mutated = mutations.reduce((r, m) => m.apply(r), record as Record<string, unknown>);
        expect(viaAjv(mutated)).toBe(typebox.Check(mutated));
        const status = validateRecord(mutated).status;
        expect(ajvRoot(mutated)).toBe(isAcceptedRecord(validateRecord(mutated)) || status === 'unsupported_version');
        expect(schemaVerdict(mutated)).toBe(status);
      }),
      propertyParameters(),
    );
  });
});
