/**
 * `@turnjournal/schema`: the record formats of the current spec version (v1). Import `@turnjournal/schema/v1` to pin
 * the version explicitly.
 * @module
 */
export * from './v1/index.js';
