import { EXTENSION_TYPE_PATTERN, MAJOR_VERSION } from './common.js';
import { findRecordDefinition, findTypedDefinition, type RecordDefinition, type RecordFamily } from './registry.js';

/** How a record's type relates to v1: defined by it, a private `x.<org>.<name>` extension, or unknown. */
export type RecordKind = 'known' | 'extension' | 'unknown';

/**
 * Where one parsed JSON value belongs (spec §Family recognition):
 * - a family and type (`definition` set when v1 defines the type);
 * - `family: 'unknown'` for an object whose type or shape names no family (rules 5 and 6; accepted, reported as
 *   `unknown_record` unless it is an extension);
 * - `family: 'none'` for a value that is not a record at all: not an object, or a discriminator that is not a
 *   string (rule 7; `invalid_record`).
 */
export type Classification =
  | {
      readonly family: RecordFamily;
      readonly type: string;
      readonly kind: RecordKind;
      readonly definition: RecordDefinition | undefined;
      /** The major version the record declares (turn `version`, event `version` or 1, header/state `schema_version`). */
      readonly version: unknown;
    }
  | {
      readonly family: 'unknown';
      /** The `type`, or `undefined` for an object with no discriminator at all (spec §4.1 rule 6). */
      readonly type: string | undefined;
      readonly kind: 'extension' | 'unknown';
      readonly definition: undefined;
      readonly version: undefined;
    }
  | { readonly family: 'none'; readonly reason: string };

/** True when the name is a private extension type, `x.<org>.<name>`. */
export function isExtensionType(name: string): boolean {
  return EXTENSION_TYPE_PATTERN.test(name);
}

/** True when the value is a plain JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function kindOf(definition: RecordDefinition | undefined, type: string): RecordKind {
  if (definition !== undefined) return 'known';
  return isExtensionType(type) ? 'extension' : 'unknown';
}

/**
 * Classifies a parsed JSON value into its family and record type, by the rules of spec §Family recognition.
 * Pure and total: it never throws, whatever the input.
 */
export function classifyRecord(value: unknown): Classification {
  if (!isJsonObject(value))
    return { family: 'none', reason: `a record must be a JSON object, got ${describeJsonType(value)}` };
  // Object.hasOwn directly, not through a helper closure: this runs once per record read.
  if (!Object.hasOwn(value, 'type')) {
    if (Object.hasOwn(value, 'event')) {
      const event = value.event;
      if (typeof event !== 'string')
        return { family: 'none', reason: `"event" must be a string, got ${describeJsonType(event)}` };
      const definition = findRecordDefinition('turn', event);
      return { family: 'turn', type: event, kind: kindOf(definition, event), definition, version: value.version };
    }
    if (Object.hasOwn(value, 'schema_version')) {
      return {
        family: 'state',
        type: 'SessionState',
        kind: 'known',
        definition: findRecordDefinition('state', 'SessionState'),
        version: value.schema_version,
      };
    }
    return { family: 'unknown', type: undefined, kind: 'unknown', definition: undefined, version: undefined };
  }
  const type = value.type;
  if (typeof type !== 'string')
    return { family: 'none', reason: `"type" must be a string, got ${describeJsonType(type)}` };
  const definition = findTypedDefinition(type);
  if (definition !== undefined) {
    return {
      family: definition.family,
      type,
      kind: 'known',
      definition,
      version: versionOf(definition.family, type, value),
    };
  }
  const kind = isExtensionType(type) ? 'extension' : 'unknown';
  if (Object.hasOwn(value, 'run_id')) return { family: 'run', type, kind, definition: undefined, version: undefined };
  if (Object.hasOwn(value, 'seq'))
    return { family: 'event', type, kind, definition: undefined, version: versionOf('event', type, value) };
  return { family: 'unknown', type, kind, definition: undefined, version: undefined };
}

function versionOf(family: RecordFamily, type: string, value: Record<string, unknown>): unknown {
  if (family === 'event') return Object.hasOwn(value, 'version') ? value.version : MAJOR_VERSION;
  if (family === 'run' && type === 'header') return value.schema_version;
  return undefined;
}

/** A short name of a JSON value's type for error messages: `string`, `integer`, `array`, `null`, … */
export function describeJsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}
