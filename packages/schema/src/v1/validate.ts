import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { Settings } from 'typebox/system';
import { type Classification, classifyRecord, describeJsonType } from './classify.js';
import { MAJOR_VERSION } from './common.js';
import { FAMILY_ENVELOPES } from './registry.js';

/**
 * Default cap on the errors reported for one record: a safeguard against hostile input. TypeBox also stops gathering
 * raw errors at its own `maxErrors` setting (8 unless the application changed it); reaching either cap sets
 * `truncated`.
 */
export const DEFAULT_MAX_ERRORS = 8;

/** One readable validation error: where (JSON pointer), what was expected, what arrived. */
export interface RecordError {
  /** JSON pointer (RFC 6901) into the record; `""` is the record itself. */
  readonly pointer: string;
  /** The JSON Schema keyword that failed (`type`, `required`, `const`, `anyOf`, …). */
  readonly keyword: string;
  /** What the schema expects at `pointer`. */
  readonly expected: string;
  /** What arrived: JSON type and a short, truncated preview (never a whole message). */
  readonly received: string;
  /** One line for people: `/created_at: expected number, got string "yesterday"`. */
  readonly message: string;
}

/**
 * The verdict on one parsed value:
 * - `valid`: a v1 record type, and the record satisfies its schema;
 * - `unknown` / `extension`: a type v1 does not define (reported as `unknown_record`, or ignored silently
 *   for `x.<org>.<name>`), whose family envelope is valid;
 * - `unsupported_version`: a record of another major version (skipped, never fatal);
 * - `invalid`: not a record, or a record that breaks its schema (`invalid_record`).
 */
export type RecordValidation =
  | { readonly status: 'valid' | 'unknown' | 'extension'; readonly classification: Classification }
  | { readonly status: 'unsupported_version'; readonly classification: Classification; readonly version: number }
  | {
      readonly status: 'invalid';
      readonly classification: Classification;
      readonly errors: readonly RecordError[];
      /** True when more errors existed than were kept. */
      readonly truncated: boolean;
    };

/** Options for {@link validateRecord}. */
export interface ValidateOptions {
  /** Keep at most this many errors (default {@link DEFAULT_MAX_ERRORS}). */
  readonly maxErrors?: number;
}

/** A schema compiled by TypeBox, as {@link compiledValidator} returns it (`Check`, `Errors`). */
export type Validator = ReturnType<typeof Compile>;
const validators = new WeakMap<TSchema, Validator>();

/** The compiled validator of a schema; each schema is compiled once, on first use. */
export function compiledValidator(schema: TSchema): Validator {
  let validator = validators.get(schema);
  if (validator === undefined) {
    validator = Compile(schema);
    validators.set(schema, validator);
  }
  return validator;
}

/** True when the validation means the record is acceptable v1 data (valid, unknown type or extension). */
export function isAcceptedRecord(validation: RecordValidation): boolean {
  return validation.status === 'valid' || validation.status === 'unknown' || validation.status === 'extension';
}

/**
 * Classifies and validates one parsed JSON value against the v1 schemas.
 * Total: it returns a verdict for any input and never throws.
 */
export function validateRecord(value: unknown, options?: ValidateOptions): RecordValidation {
  const classification = classifyRecord(value);
  if (classification.family === 'none') {
    const error = makeError('', 'type', 'a turn, event, run or state record', value, classification.reason);
    return { status: 'invalid', classification, errors: [error], truncated: false };
  }
  if (classification.family === 'unknown') return { status: classification.kind, classification };

  const version = classification.version;
  if (typeof version === 'number' && Number.isInteger(version) && version !== MAJOR_VERSION) {
    return { status: 'unsupported_version', classification, version };
  }
  const schema =
    classification.definition?.schema ??
    (classification.family === 'state' ? undefined : FAMILY_ENVELOPES[classification.family].schema);
  if (schema === undefined) throw new Error(`internal: no schema for ${classification.family}/${classification.type}`);
  const validator = compiledValidator(schema);
  if (validator.Check(value)) {
    return { status: classification.kind === 'known' ? 'valid' : classification.kind, classification };
  }
  // Only an invalid record needs the error cap.
  const requested = options?.maxErrors ?? DEFAULT_MAX_ERRORS;
  const maxErrors = Number.isFinite(requested) ? Math.max(1, Math.floor(requested)) : DEFAULT_MAX_ERRORS;
  const raw = validator.Errors(value);
  const errors = readableErrors(raw, value);
  const cutByTypeBox = raw.length >= Settings.Get().maxErrors;
  return {
    status: 'invalid',
    classification,
    errors: errors.slice(0, maxErrors),
    truncated: cutByTypeBox || errors.length > maxErrors,
  };
}

interface RawError {
  readonly keyword: string;
  readonly schemaPath: string;
  readonly instancePath: string;
  readonly params: Record<string, unknown>;
  readonly message: string;
}

/**
 * Turns raw JSON Schema errors into readable ones. A failed union (`anyOf`) is explained through the one alternative
 * the value was evidently meant to be, when there is exactly one (its discriminator and its JSON type fit): a text
 * input without `text` reports `/input/text` missing, not "text or parts or another type". Otherwise the
 * alternatives become one error at the union's location.
 */
function readableErrors(raw: readonly RawError[], root: unknown): RecordError[] {
  const out: RecordError[] = [];
  const consumed = new Set<RawError>();
  for (const error of raw) {
    if (consumed.has(error)) continue;
    const union = outermostUnion(error.schemaPath);
    if (union === undefined) {
      out.push(...plainErrors(error, root));
      continue;
    }
    // One union can fail at several locations (items of an array): each failure, located by its own `anyOf` error,
    // is explained on its own.
    const marker = raw
      .filter(
        (e) =>
          e.schemaPath === union && e.keyword === 'anyOf' && isAtOrUnderPointer(error.instancePath, e.instancePath),
      )
      .sort((a, b) => b.instancePath.length - a.instancePath.length)[0];
    const at = marker?.instancePath ?? error.instancePath;
    const members = raw.filter(
      (e) =>
        (e.schemaPath === union || e.schemaPath.startsWith(`${union}/anyOf/`)) &&
        isAtOrUnderPointer(e.instancePath, at),
    );
    for (const member of members) consumed.add(member);
    const branchErrors = members.filter((e) => e !== marker);
    const branches = new Map<string, RawError[]>();
    for (const e of branchErrors) {
      const branch = e.schemaPath.slice(union.length).split('/')[2] ?? '';
      branches.set(branch, [...(branches.get(branch) ?? []), e]);
    }
    const fitting = pickMeantBranches([...branches.values()], at);
    if (fitting.length === 1 && fitting[0] !== undefined) {
      // Re-root the branch's errors at the branch, so unions nested inside it are explained the same way.
      const reRooted = fitting[0].map((e) => ({
        ...e,
        schemaPath: `#${e.schemaPath.slice(union.length).replace(/^\/anyOf\/\d+/, '')}`,
      }));
      out.push(...readableErrors(reRooted, root));
      continue;
    }
    const expected = [...new Set(branchErrors.flatMap(expectationsOf))].join(' or ') || 'one of the allowed shapes';
    out.push(makeError(at, 'anyOf', expected, valueAt(root, at)));
  }
  return out;
}

// The schema path of the outermost union an error belongs to, e.g. `#/properties/input` for
// `#/properties/input/anyOf/1/properties/type`, or the union itself for its own `anyOf` error.
function outermostUnion(schemaPath: string): string | undefined {
  const at = schemaPath.indexOf('/anyOf/');
  return at >= 0 ? schemaPath.slice(0, at) : undefined;
}

// The alternatives the value plausibly meant: those not ruled out by a discriminator or a wrong JSON type; among
// them, a branch whose every error lies deeper than the union matched the value's shape and is preferred.
function pickMeantBranches(branches: readonly RawError[][], unionInstancePath: string): RawError[][] {
  const fitting = branches.filter((errors) => errors.every((e) => !rulesBranchOut(e, unionInstancePath)));
  const deeper = fitting.filter((errors) => errors.every((e) => e.instancePath !== unionInstancePath));
  return deeper.length === 1 ? deeper : fitting;
}

function isAtOrUnderPointer(at: string, pointer: string): boolean {
  return at === pointer || at.startsWith(`${pointer}/`);
}

// A branch is not the one the value meant when its discriminator (`const`, `not`) fails, or when the value at the
// union's own location has the wrong JSON type for it.
function rulesBranchOut(error: RawError, unionInstancePath: string): boolean {
  if (error.keyword === 'const' || error.keyword === 'not') return true;
  return error.keyword === 'type' && error.instancePath === unionInstancePath;
}

function plainErrors(error: RawError, root: unknown): RecordError[] {
  if (error.keyword === 'required') {
    return requiredProperties(error).map((name) => {
      const pointer = `${error.instancePath}/${escapePointer(name)}`;
      return makeError(
        pointer,
        'required',
        'a required property',
        undefined,
        `${pointer}: required property is missing`,
      );
    });
  }
  return [
    makeError(error.instancePath, error.keyword, expectationsOf(error).join(', '), valueAt(root, error.instancePath)),
  ];
}

function requiredProperties(error: RawError): string[] {
  const names = error.params.requiredProperties;
  return Array.isArray(names) ? names.map(String) : [];
}

function expectationsOf(error: RawError): string[] {
  const p = error.params;
  switch (error.keyword) {
    case 'type':
      return [String(p.type)];
    case 'const':
      return [JSON.stringify(p.allowedValue)];
    case 'required':
      return requiredProperties(error).map((name) => `property "${name}"`);
    case 'minLength':
      return [`a string of at least ${String(p.limit)} character(s)`];
    case 'minimum':
      return [`a number >= ${String(p.limit)}`];
    case 'not':
      return ['a value other than the excluded ones'];
    default:
      return [error.message];
  }
}

function makeError(pointer: string, keyword: string, expected: string, value: unknown, message?: string): RecordError {
  const received = previewValue(value);
  return {
    pointer,
    keyword,
    expected,
    received,
    message: message ?? `${pointer || '(record)'}: expected ${expected}, got ${received}`,
  };
}

const PREVIEW_CHARS = 40;

/** A short description of a value for error messages: its JSON type and a truncated preview. */
export function previewValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  const type = describeJsonType(value);
  if (type === 'object' || type === 'array') return type;
  // Values JSON cannot hold (NaN, Infinity, bigint, functions, symbols) only come from callers passing non-JSON data;
  // describe them rather than let JSON.stringify throw or print "null".
  if (typeof value === 'number' && !Number.isFinite(value)) return `number ${String(value)}`;
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return type;
  const text = JSON.stringify(value);
  return `${type} ${text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS)}…` : text}`;
}

function escapePointer(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1');
}

function valueAt(root: unknown, pointer: string): unknown {
  if (pointer === '') return root;
  let node: unknown = root;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}
