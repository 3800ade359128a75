/**
 * Deeper than this, a value is left to the round trip: it bounds the walk's recursion, and a cycle ends here too
 * (the round trip then refuses it with the serialiser's error).
 */
const MAX_DEPTH = 32;

/** What {@link jsonCopy} answers for a value it cannot vouch for. */
export const NOT_CLEAN: unique symbol = Symbol('not JSON-clean');

/**
 * A fresh copy of `value` equal to `JSON.parse(JSON.stringify(value))` — same members, same order, same values — when
 * that can be told from the value itself, else {@link NOT_CLEAN}. What the checked encoder uses to skip parsing its
 * line back: `JSON.stringify` of the copy is the line, and the copy is the value a reader parses from it, so the copy
 * is what gets validated and written (TJ-COMPAT-018). It also reads each member once, so a getter or a proxy that
 * answers differently the next time cannot make the line differ from what was checked.
 *
 * Clean: strings (any: lone surrogates and U+2028 are escaped and parse back the same), booleans, null, finite
 * numbers (-0 is copied as 0, the number `JSON.stringify` prints), and plain objects (prototype `Object.prototype` or
 * null) and arrays (prototype `Array.prototype`) of clean values without a `toJSON` method. Everything whose JSON
 * differs from the value or cannot be had is not: `undefined`, functions, symbols, `NaN`, infinities, BigInts, an
 * array hole, a `toJSON` method, a class instance, a `Date`, a `__proto__` member (`JSON.parse` makes it an own
 * member, an assignment would set the prototype), an integer beyond ±(2^53-1) (so the caller's round trip refuses it,
 * TJ-FRAME-035), a nesting deeper than 32. The caller then takes the round trip, which handles them as it always did.
 */
export function jsonCopy(value: unknown): unknown {
  return copyValue(value, 0);
}

function copyValue(value: unknown, depth: number): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isFinite(value) || (Number.isInteger(value) && !Number.isSafeInteger(value))) return NOT_CLEAN;
      return value === 0 ? 0 : value;
    case 'object':
      if (value === null) return null;
      if (depth >= MAX_DEPTH) return NOT_CLEAN;
      return Array.isArray(value) ? copyArray(value, depth + 1) : copyObject(value, depth + 1);
    default:
      return NOT_CLEAN;
  }
}

function copyArray(array: readonly unknown[], depth: number): unknown {
  if (Object.getPrototypeOf(array) !== Array.prototype) return NOT_CLEAN;
  if (typeof (array as { toJSON?: unknown }).toJSON === 'function') return NOT_CLEAN;
  const length = array.length;
  const copy = new Array<unknown>(length);
  for (let i = 0; i < length; i += 1) {
    // A hole reads as undefined, which is not clean: `JSON.stringify` prints null for it.
    const member = copyValue(array[i], depth);
    if (member === NOT_CLEAN) return NOT_CLEAN;
    copy[i] = member;
  }
  return copy;
}

function copyObject(object: object, depth: number): unknown {
  const prototype = Object.getPrototypeOf(object) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return NOT_CLEAN;
  const source = object as Record<string, unknown>;
  if (typeof source.toJSON === 'function') return NOT_CLEAN;
  // The keys `JSON.stringify` serialises, in its order: own, enumerable, string-keyed.
  const keys = Object.keys(source);
  const copy: Record<string, unknown> = {};
  for (let i = 0; i < keys.length; i += 1) {
    const key = keys[i] as string;
    if (key === '__proto__') return NOT_CLEAN;
    const member = copyValue(source[key], depth);
    if (member === NOT_CLEAN) return NOT_CLEAN;
    copy[key] = member;
  }
  return copy;
}
