/**
 * `@turnjournal/conformance`: the fixture runner and the `turnjournal` CLI. Property suites and the adapter
 * protocol arrive in later versions.
 * @module
 */
export * from './cli/validate-files.js';
export * from './fixtures/index.js';
export * from './requirements/index.js';
