/**
 * turnjournal v1: TypeBox schemas and static types for the four record families (turn, event, run, state),
 * family recognition, validators and the JSON Schema emitted from them. Normative text: `spec/v1/spec.md`.
 * @module
 */
export * from './classify.js';
export * from './common.js';
export * from './event.js';
export * from './findings.js';
export * from './json-schema.js';
export * from './registry.js';
export * from './report.js';
export * from './run.js';
export * from './state.js';
export * from './turn.js';
export * from './validate.js';
