/**
 * Why the kit itself could not do what it was asked, one code per cause. The `turnjournal` command turns each into its
 * exit status: `usage` 2, `refused` 1, every other code 3.
 */
export type ConformanceErrorCode =
  /** A command line, option or file argument the kit cannot run with (exit 2). */
  | 'usage'
  /** A maintenance command a writer refused: a live writer holds a journal's lock, an invalid option (exit 1). */
  | 'refused'
  /** A data file the kit ships with (fixtures, spec) is missing from its package: a broken install. */
  | 'kit_file_missing'
  /** A fixture file is not valid JSON or breaks the fixture schema. */
  | 'invalid_fixture_file'
  /** The spec's requirement list is malformed (a duplicate id, an item without a BCP 14 keyword). */
  | 'invalid_requirements'
  /** The frozen fixture list (`fixtures/v1/FROZEN.sha256`) is malformed. */
  | 'invalid_frozen_list';

/**
 * The one error the conformance kit throws for its own failures, with a typed {@link ConformanceError.code}. Three
 * other errors have other roles: `AdapterFailure` (an adapter under test broke the protocol), `AdapterRequestError`
 * (thrown by an adapter's implementation to answer with a protocol error code) and `SimulatedCrashError` (the simulated
 * file system's crash, errno-like for the writer under test).
 */
export class ConformanceError extends Error {
  /** What went wrong. */
  readonly code: ConformanceErrorCode;
  /** The file concerned, when there is one (a fixture file, a missing kit file). */
  readonly path: string | undefined;

  /**
   * @param code what went wrong.
   * @param message the whole message, naming the file when there is one.
   * @param options the cause, and the file concerned.
   */
  constructor(code: ConformanceErrorCode, message: string, options: ErrorOptions & { readonly path?: string } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ConformanceError';
    this.code = code;
    this.path = options.path;
  }
}
