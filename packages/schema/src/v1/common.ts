import Type, { type Static, type TSchema } from 'typebox';

/** The major version of the record formats defined by this module (spec v1). */
export const MAJOR_VERSION = 1;

/**
 * Pattern of a private extension type or event name, `x.<org>.<name>` (e.g. `x.acme.note`).
 * Records of such a type are accepted and ignored silently (spec §Forward compatibility).
 */
export const EXTENSION_TYPE_PATTERN = /^x\.[A-Za-z0-9_-]+\.[A-Za-z0-9_.-]+$/;

/** A non-empty string: every id in the protocol (`turn_id`, `run_id`, `request_id`, …). */
export function Id(description: string) {
  return Type.String({ minLength: 1, description });
}

/**
 * An open enumeration: any string is valid, and `known` lists the values the spec defines.
 * Readers accept unknown values (spec TJ-COMPAT); the known values travel in the JSON Schema as `examples`.
 */
export function OpenEnum(known: readonly string[], description: string) {
  return Type.String({
    description: `${description} Open set: known values are ${known.map((v) => `"${v}"`).join(', ')}; other values are accepted.`,
    examples: [...known],
  });
}

/** A timestamp string; RFC 3339 is recommended but not enforced, so real writers' variants stay valid. */
export function Timestamp(description: string) {
  return Type.String({
    minLength: 1,
    description: `${description} RFC 3339 recommended (e.g. 2026-02-03T12:34:56.789Z).`,
  });
}

/** A non-negative integer. */
export function Count(description: string) {
  return Type.Integer({ minimum: 0, description });
}

/** `value | null`. */
export function Nullable<T extends TSchema>(schema: T) {
  return Type.Union([schema, Type.Null()]);
}

/** Free-form extension data reserved for forward-compatible additions (seed 004 §9). */
export const Meta = Type.Record(Type.String(), Type.Unknown(), {
  description: 'Free-form object reserved for forward-compatible extensions.',
});
/** Free-form extension data reserved for forward-compatible additions. */
export type Meta = Static<typeof Meta>;

/** A chat message: an open object whose only required field is `role`; `content` is any JSON value. */
export const Message = Type.Object(
  {
    role: Type.String({ description: 'Author role, e.g. "user", "assistant", "system", "tool".' }),
    content: Type.Optional(Type.Unknown({ description: 'Message content; any JSON value.' })),
  },
  { title: 'Message', description: 'A chat message; fields beyond `role` are free and preserved.' },
);
/** A chat message: an open object whose only required field is `role`. */
export type Message = Static<typeof Message>;

/** Model identification as run records carry it (seed 004). */
export const ModelInfo = Type.Object(
  {
    provider: Type.Optional(Type.String()),
    name: Type.Optional(Type.String()),
    reasoning: Type.Optional(Type.String()),
    source: Type.Optional(Type.String()),
  },
  { title: 'ModelInfo', description: 'Model identification; every field optional.' },
);
/** Model identification as run records carry it. */
export type ModelInfo = Static<typeof ModelInfo>;
