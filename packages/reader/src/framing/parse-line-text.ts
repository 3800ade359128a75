/** What {@link parseJsonText} answers for a text that is not one JSON value. */
export const NOT_JSON: unique symbol = Symbol('not JSON');

/** What {@link decodeUtf8} answers for bytes that are not valid UTF-8. */
export const NOT_UTF8: unique symbol = Symbol('not UTF-8');

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The text of `bytes`, or {@link NOT_UTF8} when they are not valid UTF-8 (the fatal decoder, TJ-FRAME-015), at the
 * cost of a decode and not of an exception's stack trace: the decoder throws on invalid bytes, two throws a line, and
 * their stack traces were most of what checking a journal of such lines cost (bench/results/history.md, "The live
 * committed message: the same work costs more after a wait", "Hostile journals"). See {@link parseJsonText}.
 */
export function decodeUtf8(bytes: Uint8Array): string | typeof NOT_UTF8 {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return utf8.decode(bytes);
  } catch (error) {
    // Invalid bytes are what the fatal decoder refuses; anything else (out of memory, a broken runtime) is no answer.
    if (isInvalidUtf8(error)) return NOT_UTF8;
    throw error;
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/**
 * `JSON.parse(text)`, or {@link NOT_JSON} when the text is not one JSON value, at the cost of a parse and not of an
 * exception. A damaged line made `JSON.parse` throw, and a thrown `SyntaxError` captured a stack trace, which cost
 * several times the parse of a whole valid record, so a hostile journal of millions of tiny bad lines (two throws each)
 * took minutes to check (bench/results/history.md, "The live committed message: the same work costs more after a
 * wait", "Hostile journals"). So a text whose first and last characters after JSON's whitespace cannot begin and end
 * one JSON value (a log line, binary garbage, a torn record) is answered without a parse, and the parse that does run
 * has no stack trace to capture, though a throw still costs more than a parse. `JSON.parse` is given no reviver and
 * calls no other code while the limit is 0. The answer is `JSON.parse`'s in every case: the characters checked first
 * are ones every JSON value has.
 */
export function parseJsonText(text: string): unknown {
  if (!mayBeJson(text)) return NOT_JSON;
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return JSON.parse(text);
  } catch (error) {
    // A text that is not JSON is a SyntaxError; anything else (out of memory) is no answer about the text.
    if (error instanceof SyntaxError) return NOT_JSON;
    throw error;
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** True for the error the fatal UTF-8 decoder throws on invalid bytes (a `TypeError`, code `ERR_ENCODING_INVALID_ENCODED_DATA`). */
export function isInvalidUtf8(error: unknown): boolean {
  return error instanceof TypeError && (error as { code?: unknown }).code === 'ERR_ENCODING_INVALID_ENCODED_DATA';
}

/** JSON's whitespace (RFC 8259 §2). */
function isJsonSpace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
}

/**
 * False when the text cannot be one JSON value by its first and last characters after JSON's whitespace (RFC 8259
 * §2): an object ends with `}`, an array with `]`, a string with `"`, a number with a digit, `true` and `false` with
 * `e`, `null` with `l`, and nothing else can start one. A torn line (a record cut short) fails here without a parse.
 */
function mayBeJson(text: string): boolean {
  let first = 0;
  while (first < text.length && isJsonSpace(text.charCodeAt(first))) first += 1;
  let last = text.length - 1;
  while (last > first && isJsonSpace(text.charCodeAt(last))) last -= 1;
  if (first > last) return false;
  const end = text.charCodeAt(last);
  switch (text.charCodeAt(first)) {
    case 0x7b: // {
      return end === 0x7d;
    case 0x5b: // [
      return end === 0x5d;
    case 0x22: // "
      return end === 0x22;
    case 0x74: // t(rue)
    case 0x66: // f(alse)
      return end === 0x65;
    case 0x6e: // n(ull)
      return end === 0x6c;
    default: {
      const start = text.charCodeAt(first);
      return (start === 0x2d || (start >= 0x30 && start <= 0x39)) && end >= 0x30 && end <= 0x39;
    }
  }
}
