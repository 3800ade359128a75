import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { buildJsonSchema, SCHEMA_ID, validateRecord } from '../../src/v1/index.js';
import { schemaVerdictFunction } from '../support/schema-verdict.js';

const recordFixtures = join(import.meta.dirname, '../../../../fixtures/v1/records');

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

describe('the verdict table (spec §9.6, TJ-COMPAT-019): schema.json alone reproduces validateRecord', () => {
  const verdict = schemaVerdictFunction();

  it.each([
    [
      'another major version of a turn record',
      { event: 'submitted', version: 2, turn_id: 't1' },
      'unsupported_version',
    ],
    ['another major version of an event record', { type: 'chat.delta', seq: 3, version: 2 }, 'unsupported_version'],
    ['another major version of a run header', { type: 'header', schema_version: 2 }, 'unsupported_version'],
    ['another major version of a state document', { schema_version: 3 }, 'unsupported_version'],
    ['an object with no discriminator', {}, 'unknown'],
    ['an unknown type outside any family', { type: 'mystery' }, 'unknown'],
    ['an extension type', { type: 'x.acme.note', note: 'hi' }, 'extension'],
    ['a discriminator that is not a string', { type: 7 }, 'invalid'],
    ['a version that is not an integer', { event: 'submitted', version: '2' }, 'invalid'],
  ])('%s', (_name, record, expected) => {
    expect(validateRecord(record).status).toBe(expected);
    expect(verdict(record)).toBe(expected);
  });

  it('on every record fixture', () => {
    let checked = 0;
    // Gold cases a later spec change outvoted are skipped, as every fixture runner skips them (fixtures/README.md).
    const superseded = new Set(
      (
        JSON.parse(readFileSync(join(recordFixtures, '../../superseded.json'), 'utf8')) as {
          cases: { file: string; case: string }[];
        }
      ).cases.map((entry) => `${entry.file} › ${entry.case}`),
    );
    for (const file of readdirSync(recordFixtures).filter((name) => name.endsWith('.json'))) {
      const fixture = JSON.parse(readFileSync(join(recordFixtures, file), 'utf8')) as {
        groups: {
          description: string;
          tests: { description: string; record: unknown; expect: { status: string } }[];
        }[];
      };
      const tests = fixture.groups.flatMap((group) =>
        group.tests.filter(
          (test) => !superseded.has(`v1/records/${file} › ${group.description} › ${test.description}`),
        ),
      );
      for (const test of tests) {
        expect({ file, test: test.description, verdict: verdict(test.record) }).toEqual({
          file,
          test: test.description,
          verdict: test.expect.status,
        });
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(300);
  });
});
