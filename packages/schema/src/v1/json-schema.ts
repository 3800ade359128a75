import type { TSchema } from 'typebox';
import { EXTENSION_TYPE_PATTERN, MAJOR_VERSION, Message, ModelInfo } from './common.js';
import { FAMILY_ENVELOPES, RECORD_DEFINITIONS, type RecordFamily } from './registry.js';
import { RunInput, Usage } from './run.js';
import { Attachment } from './turn.js';

/** The `$id` of the v1 record schema document (`spec/v1/schema.json`). */
export const SCHEMA_ID = 'https://turnjournal.dev/spec/v1/schema.json';

/** JSON Schema dialect of the emitted document. */
export const SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema';

/** Names of the per-family entry schemas in `$defs`. */
export const FAMILY_ENTRY_NAMES: Readonly<Record<RecordFamily, string>> = {
  turn: 'TurnRecord',
  event: 'EventRecord',
  run: 'RunRecord',
  state: 'SessionState',
};

/**
 * Names of the `$defs` that map a JSON Schema result to a `validateRecord` verdict (spec §9.6). Checked in this
 * order: {@link VERDICT_DEF_NAMES.unsupportedVersion} valid → `unsupported_version`; root invalid → `invalid`;
 * `extension` valid → `extension`; `unknown` valid → `unknown`; otherwise `valid`.
 */
export const VERDICT_DEF_NAMES = {
  unsupportedVersion: 'UnsupportedVersionRecord',
  extension: 'ExtensionRecord',
  unknown: 'UnknownRecord',
} as const;

/** A JSON Schema document as plain JSON. */
export type JsonSchemaDocument = { readonly [key: string]: unknown };

// Sub-schemas that several records share; in the document they appear once, under $defs, and are referenced.
const SHARED: readonly (TSchema & { title?: string })[] = [Message, ModelInfo, Attachment, Usage, RunInput];

const ref = (name: string) => ({ $ref: `#/$defs/${name}` });

/**
 * Builds the JSON Schema (2020-12) document for all of v1 from the TypeBox source: `$defs` for every record type
 * and shared shape, one entry schema per family, and a root schema that applies the family-recognition rules of the
 * spec, so validating any parsed line against the root accepts exactly what `validateRecord` accepts.
 */
export function buildJsonSchema(): JsonSchemaDocument {
  const shared = new Map(SHARED.map((schema) => [canonical(schema), String(schema.title)]));
  const defs: Record<string, unknown> = {};
  for (const schema of SHARED) defs[String(schema.title)] = referenceShared(toJson(schema), shared, true);
  for (const envelope of Object.values(FAMILY_ENVELOPES)) {
    defs[envelope.name] = referenceShared(toJson(envelope.schema), shared, true);
  }
  for (const definition of RECORD_DEFINITIONS) {
    defs[definition.name] = referenceShared(toJson(definition.schema), shared, true);
  }
  defs.TurnRecord = familyEntry('turn', 'event');
  defs.EventRecord = familyEntry('event', 'type');
  defs.RunRecord = {
    description: 'Any run record: the header, or a record with the run envelope whose known types are validated.',
    if: discriminatorIs('type', 'header'),
    then: ref('RunHeader'),
    else: familyEntry('run', 'type'),
  };

  const typeNames = (family: RecordFamily) => RECORD_DEFINITIONS.filter((d) => d.family === family).map((d) => d.type);
  Object.assign(defs, verdictDefs(typeNames));
  return {
    $schema: SCHEMA_DIALECT,
    $id: SCHEMA_ID,
    title: 'turnjournal v1 records',
    description:
      'Generated from @turnjournal/schema; do not edit. Validates one parsed JSONL line (or a state document) of any v1 family, applying the family-recognition rules of spec/v1/spec.md. Unknown fields, unknown types and x.<org>.<name> extension types are accepted.',
    type: 'object',
    // A record of another major version is skipped, never judged by v1 shapes (TJ-COMPAT-011, TJ-COMPAT-014).
    if: ref(VERDICT_DEF_NAMES.unsupportedVersion),
    then: true,
    else: recognised(typeNames),
    $defs: defs,
  };
}

/** The family-recognition rules of spec §4.1 applied to a record of the supported major version. */
function recognised(typeNames: (family: RecordFamily) => string[]) {
  return {
    type: 'object',
    if: { not: present('type') },
    then: {
      if: present('event'),
      then: ref('TurnRecord'),
      else: { if: present('schema_version'), then: ref('SessionState'), else: true },
    },
    else: {
      type: 'object',
      required: ['type'],
      properties: { type: { type: 'string' } },
      if: { type: 'object', properties: { type: { enum: typeNames('run') } } },
      then: ref('RunRecord'),
      else: {
        if: { type: 'object', properties: { type: { enum: typeNames('event') } } },
        then: ref('EventRecord'),
        else: {
          if: present('run_id'),
          then: ref('RunRecord'),
          else: { if: present('seq'), then: ref('EventRecord'), else: true },
        },
      },
    },
  };
}

/**
 * The `$defs` of the verdict table (spec §9.6), each a mechanical transcription of `classifyRecord` and the version
 * rule of `validateRecord`: which objects declare another major version, and which carry an extension or unknown
 * discriminator. They say nothing about validity; the root schema does.
 */
function verdictDefs(typeNames: (family: RecordFamily) => string[]): Record<string, unknown> {
  const runTypes = typeNames('run');
  const eventTypes = typeNames('event');
  const knownTyped = [...runTypes, ...eventTypes];
  const otherVersion = { type: 'integer', not: { const: MAJOR_VERSION } };
  const extensionName = { type: 'string', pattern: EXTENSION_TYPE_PATTERN.source };
  const noType = { not: present('type') };
  return {
    [VERDICT_DEF_NAMES.unsupportedVersion]: {
      description:
        'A record of a major version other than 1 (spec §9.4): validateRecord answers unsupported_version and a reader skips it.',
      type: 'object',
      anyOf: [
        {
          description: 'turn: `version` (§4.1 rule 1).',
          allOf: [
            noType,
            { required: ['event', 'version'], properties: { event: { type: 'string' }, version: otherVersion } },
          ],
        },
        {
          description: 'state: `schema_version` (§4.1 rule 2).',
          allOf: [
            noType,
            { not: present('event') },
            { required: ['schema_version'], properties: { schema_version: otherVersion } },
          ],
        },
        {
          description: 'run header: `schema_version` (§4.1 rule 3).',
          required: ['type', 'schema_version'],
          properties: { type: { const: 'header' }, schema_version: otherVersion },
        },
        {
          description:
            'event: `version`, on an event type or an unknown type with `seq` and no `run_id` (§4.1 rules 4, 5).',
          required: ['type', 'version'],
          properties: { type: { type: 'string' }, version: otherVersion },
          anyOf: [
            { properties: { type: { enum: eventTypes } } },
            {
              allOf: [
                { not: { properties: { type: { enum: knownTyped } } } },
                { not: present('run_id') },
                present('seq'),
              ],
            },
          ],
        },
      ],
    },
    [VERDICT_DEF_NAMES.extension]: {
      description:
        'A record whose discriminator (`type`, or `event` when there is no `type`) is an x.<org>.<name> extension name (spec §9.2).',
      type: 'object',
      anyOf: [
        { required: ['type'], properties: { type: extensionName } },
        { allOf: [noType, { required: ['event'], properties: { event: extensionName } }] },
      ],
    },
    [VERDICT_DEF_NAMES.unknown]: {
      description:
        'A record of a type v1 does not define and that is no extension, or an object with no discriminator (spec §4.1 rules 5, 6; §9.2).',
      type: 'object',
      anyOf: [
        { allOf: [noType, { not: present('event') }, { not: present('schema_version') }] },
        {
          required: ['type'],
          properties: { type: { type: 'string' } },
          allOf: [
            { not: { properties: { type: { enum: knownTyped } } } },
            { not: { properties: { type: extensionName } } },
          ],
        },
        {
          required: ['event'],
          properties: { event: { type: 'string' } },
          allOf: [
            noType,
            { not: { properties: { event: { enum: typeNames('turn') } } } },
            { not: { properties: { event: extensionName } } },
          ],
        },
      ],
    },
  };
}

function familyEntry(family: Exclude<RecordFamily, 'state'>, discriminator: 'event' | 'type') {
  const envelope = FAMILY_ENVELOPES[family];
  return {
    description: `Any ${family}-family record: the ${envelope.name}, plus the schema of the record type when v1 defines it.`,
    allOf: [
      ref(envelope.name),
      ...RECORD_DEFINITIONS.filter((d) => d.family === family && !(family === 'run' && d.type === 'header')).map(
        (d) => ({
          if: discriminatorIs(discriminator, d.type),
          then: ref(d.name),
        }),
      ),
    ],
  };
}

// ajv's strictRequired wants every required name declared beside it; `true` declares it without constraining it.
function present(name: string) {
  return { type: 'object', required: [name], properties: { [name]: true } };
}

function discriminatorIs(discriminator: string, value: string) {
  return { type: 'object', required: [discriminator], properties: { [discriminator]: { const: value } } };
}

function toJson(schema: TSchema): unknown {
  return JSON.parse(JSON.stringify(schema));
}

function canonical(value: unknown): string {
  return JSON.stringify(value);
}

function referenceShared(node: unknown, shared: ReadonlyMap<string, string>, isRoot: boolean): unknown {
  if (Array.isArray(node)) return node.map((item) => referenceShared(item, shared, false));
  if (typeof node !== 'object' || node === null) return node;
  if (!isRoot) {
    const name = shared.get(canonical(node));
    if (name !== undefined) return ref(name);
  }
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, referenceShared(value, shared, false)]));
}
