/**
 * `@turnjournal/reader`: the streaming tolerant reader of turnjournal stores. Framing (spec §3) is complete: line
 * splitting, decoding, glued-record salvage and recovery modes. Derivation, audit, recovery plan and replay follow.
 * @module
 */
export * from './errors.js';
export * from './framing/decode-line.js';
export * from './framing/line-splitter.js';
export * from './framing/read-journal.js';
export * from './turn/canonical-json.js';
export * from './turn/derive-turns.js';
