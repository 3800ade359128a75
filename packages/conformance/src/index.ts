/**
 * `@turnjournal/conformance`: the fixture runner, the black-box adapter protocol with its reference adapter and
 * conformance runner, and the `turnjournal` CLI. Property suites arrive in later versions.
 * @module
 */
export * from './adapter/index.js';
export * from './cli/validate-files.js';
export * from './fixtures/index.js';
export * from './requirements/index.js';
export * from './simulated-fs/index.js';
