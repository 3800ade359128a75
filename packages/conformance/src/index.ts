/**
 * `@turnjournal/conformance`: the fixture runner, the requirements map and coverage check, the simulated file system
 * for crash testing, and the `turnjournal` CLI. The black-box adapter protocol arrives in a later version.
 * @module
 */
export * from './cli/validate-files.js';
export * from './fixtures/index.js';
export * from './requirements/index.js';
export * from './simulated-fs/index.js';
