/**
 * `@turnjournal/conformance`: prove an implementation of turnjournal in any language. The black-box conformance run
 * against an adapter (`runConformance`, the `turnjournal conformance` command), the adapter protocol with the reference
 * adapter to build one in TypeScript (`runAdapter`), the language-agnostic fixture runners, and the simulated file
 * system that loses, tears and reorders unsynced writes for property tests of a writer. The `turnjournal` CLI ships in
 * this package; `@turnjournal/conformance/vitest` runs the kit inside a vitest suite.
 *
 * Every name here is a decision: the package's API snapshot (`packages/conformance/api.txt`) lists them. The
 * maintenance tooling of the repository (requirements map, fixture manifest, frozen gold list) is not part of it.
 * @module
 */

export type {
  AdapterImplementation,
  AdapterWriter,
  LifecycleOperations,
  RetentionOperations,
  RunStep,
} from './adapter/adapter-implementation.js';
export { CONFORMANCE_FORMATS, type ConformanceFormat, formatConformanceReport } from './adapter/format.js';
export { AdapterFailure, type AdapterFailureKind } from './adapter/process.js';
// Writing an adapter (adapter.md): the messages, and the reference implementation's loop to reuse in TypeScript.
export {
  ADAPTER_PROTOCOL_VERSION,
  type AdapterErrorCode,
  AdapterMessages,
  type AdapterRequest,
  type AdapterResponse,
  type LiveSubscribeResult,
  type ReadResult,
  type ReplayResult,
  type StartResult,
} from './adapter/protocol.js';
export { runAdapter } from './adapter/reference-adapter.js';
export { referenceImplementation } from './adapter/reference-implementation.js';
export type {
  LiveLimits,
  LiveOperations,
  LiveSessionRef,
  LiveSnapshotAnswer,
  LiveStep,
} from './adapter/reference-live.js';
export { referenceStoreLinesImplementation } from './adapter/reference-store-lines.js';
export { CheckReport, type CheckStatus, ConformanceReport, ExpectedFailures } from './adapter/report.js';
export { AdapterRequestError } from './adapter/request-error.js';
// The conformance run and its report (spec §17, adapter.md).
export { type ConformanceOptions, type ConformanceTier, DEFAULT_SEED, runConformance } from './adapter/runner.js';
export { ConformanceError, type ConformanceErrorCode } from './errors.js';

// The fixtures (fixtures/README.md): load them and run them against a reader.
export {
  FixtureFile,
  type RecordFixtureFile,
  type StoreFixtureCase,
  type StoreFixtureFile,
} from './fixtures/fixture-file.js';
export { type LoadedFixtureFile, loadFixtures } from './fixtures/load-fixtures.js';
export {
  type FixtureResult,
  type JsonSchemaCheck,
  type RunRecordFixturesOptions,
  runRecordFixtures,
} from './fixtures/run-record-fixtures.js';
export {
  type EventLogObservation,
  runStoreFixtures,
  type StoreObservation,
  type StoreReader,
} from './fixtures/run-store-fixtures.js';

// The simulated file system for property tests of writers.
export {
  type CrashReport,
  type RandomSource,
  SimulatedCrashError,
  type SimulatedFault,
  SimulatedFileSystem,
  type SimulatedOperation,
  seededRandom,
} from './simulated-fs/simulated-file-system.js';
