// Generates JSON values that satisfy a JSON Schema, for the subset of keywords the v1 schemas use. It works from the
// schema JSON itself, so every record type added to the registry is covered without writing a new generator.
import fc from 'fast-check';

type Schema = { readonly [key: string]: unknown } | boolean;

const jsonLeaf = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
);
/** Any JSON value, small. */
export const anyJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, jsonLeaf, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 3 }),
  object: fc.dictionary(fc.string({ maxLength: 6 }), tie('value'), { maxKeys: 3 }),
})).value;

/** An arbitrary of values valid against `schema` (keywords: type, const, anyOf, properties, required, items, patternProperties, minLength, minimum, not/enum). */
export function arbitraryFor(schema: Schema): fc.Arbitrary<unknown> {
  if (schema === true) return anyJson;
  if (schema === false) throw new Error('no value satisfies the false schema');
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.anyOf)) return fc.oneof(...(schema.anyOf as Schema[]).map(arbitraryFor));
  switch (schema.type) {
    case 'string':
      return stringFor(schema);
    case 'integer':
      return fc.integer({ min: typeof schema.minimum === 'number' ? schema.minimum : -1e6, max: 1e9 });
    case 'number':
      return fc.double({
        min: typeof schema.minimum === 'number' ? schema.minimum : -1e12,
        max: 1e12,
        noNaN: true,
        noDefaultInfinity: true,
      });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(arbitraryFor((schema.items as Schema | undefined) ?? true), { maxLength: 3 });
    case 'object':
      return objectFor(schema);
    case undefined:
      return anyJson;
    default:
      throw new Error(`arbitraryFor: unsupported type ${String(schema.type)}`);
  }
}

function stringFor(schema: { readonly [key: string]: unknown }): fc.Arbitrary<string> {
  const minLength = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const excluded = (schema.not as { enum?: unknown[] } | undefined)?.enum ?? [];
  return fc.string({ minLength, maxLength: minLength + 12, unit: 'grapheme' }).filter((s) => !excluded.includes(s));
}

function objectFor(schema: { readonly [key: string]: unknown }): fc.Arbitrary<Record<string, unknown>> {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set((schema.required ?? []) as string[]);
  const pattern = schema.patternProperties as Record<string, Schema> | undefined;
  if (pattern !== undefined && Object.keys(properties).length === 0) {
    const valueSchema = Object.values(pattern)[0] ?? true;
    return fc.dictionary(fc.string({ maxLength: 6 }), arbitraryFor(valueSchema), { maxKeys: 3 });
  }
  const record: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, sub] of Object.entries(properties)) record[name] = arbitraryFor(sub);
  // Optional properties are present or absent at random; fc.record decides per key.
  return fc.record(record, { requiredKeys: [...required] as never[], noNullPrototype: true }) as fc.Arbitrary<
    Record<string, unknown>
  >;
}

/** How a valid record is damaged: the mutation and the pointer it touched, so a failure says what was done. */
export interface Mutation {
  readonly description: string;
  readonly apply: (record: Record<string, unknown>) => Record<string, unknown>;
}

/**
 * A mutation applied to one object nested anywhere in the record (the record itself included), chosen by `at`, so
 * unions, arrays of messages and nested shapes get damaged too, not only top-level fields.
 */
export function arbitraryDeepMutation(): fc.Arbitrary<Mutation> {
  return fc.tuple(fc.nat(), arbitraryMutation()).map(([at, mutation]) => ({
    description: `at object #${at}: ${mutation.description}`,
    apply: (record: Record<string, unknown>) => {
      const count = countObjects(record);
      return applyAt(record, at % count, mutation.apply).value as Record<string, unknown>;
    },
  }));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function countObjects(value: unknown): number {
  const own = isPlainObject(value) ? 1 : 0;
  const children = Array.isArray(value) ? value : isPlainObject(value) ? Object.values(value) : [];
  return children.reduce((n: number, child) => n + countObjects(child), own);
}

// Applies `change` to the object with pre-order index `index`; returns the new value and how many objects it passed.
function applyAt(
  value: unknown,
  index: number,
  change: (o: Record<string, unknown>) => Record<string, unknown>,
): { value: unknown; seen: number } {
  let seen = 0;
  if (isPlainObject(value)) {
    if (index === 0) return { value: change(value), seen: countObjects(value) };
    seen = 1;
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value)) {
      const result = applyAt(child, index - seen, change);
      out[key] = result.value;
      seen += result.seen;
    }
    return { value: out, seen };
  }
  if (Array.isArray(value)) {
    const out = value.map((child) => {
      const result = applyAt(child, index - seen, change);
      seen += result.seen;
      return result.value;
    });
    return { value: out, seen };
  }
  return { value, seen: 0 };
}

/** Mutations of a valid record; some keep it valid (unknown fields), most make it invalid. */
export function arbitraryMutation(): fc.Arbitrary<Mutation> {
  const key = fc.nat();
  return fc.oneof(
    key.map((n) => ({
      description: `delete the ${n}th field`,
      apply: (r: Record<string, unknown>) => {
        const keys = Object.keys(r);
        if (keys.length === 0) return r;
        const copy = { ...r };
        delete copy[keys[n % keys.length] as string];
        return copy;
      },
    })),
    fc.tuple(key, anyJson).map(([n, value]) => ({
      description: `replace the ${n}th field with ${JSON.stringify(value)}`,
      apply: (r: Record<string, unknown>) => {
        const keys = Object.keys(r);
        if (keys.length === 0) return r;
        return { ...r, [keys[n % keys.length] as string]: value };
      },
    })),
    fc.tuple(fc.string({ minLength: 1, maxLength: 8 }), anyJson).map(([name, value]) => ({
      description: `add field ${JSON.stringify(name)} = ${JSON.stringify(value)}`,
      apply: (r: Record<string, unknown>) => ({ ...r, [name]: value }),
    })),
    fc.constantFrom('version', 'schema_version').chain((field) =>
      fc.integer({ min: 0, max: 5 }).map((v) => ({
        description: `set ${field} = ${v}`,
        apply: (r: Record<string, unknown>) => (field in r ? { ...r, [field]: v } : r),
      })),
    ),
    fc.constantFrom('type', 'event').chain((field) =>
      fc
        .oneof(
          fc.constantFrom('x.acme.note', 'future_thing', 'run.end', 'submitted', 'chat.delta'),
          fc.string({ maxLength: 6 }),
        )
        .map((v) => ({
          description: `set ${field} = ${JSON.stringify(v)}`,
          apply: (r: Record<string, unknown>) => (field in r ? { ...r, [field]: v } : r),
        })),
    ),
  );
}
