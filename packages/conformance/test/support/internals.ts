// Every module of the kit's sources in one place, for tests that exercise internals (strace parsing, requirement
// maps, fixture manifests, the adapter process). The published entry (src/index.ts) exports a chosen list; tests are
// not limited to it.
export * from '../../src/adapter/index.js';
export * from '../../src/cli/validate-files.js';
export * from '../../src/errors.js';
export * from '../../src/fixtures/index.js';
export * from '../../src/requirements/index.js';
export * from '../../src/simulated-fs/index.js';
