import { rmSync } from 'node:fs';
import { loadRequirementLevels, locateStoreFixtures } from './locate.js';
import { AdapterFailure, DEFAULT_REQUEST_TIMEOUT_MS } from './process.js';
import type { StartResult } from './protocol.js';
import type { CheckReport, ConformanceReport, ExpectedFailures } from './report.js';
import { assembleReport } from './runner/assemble-report.js';
import { freshDir } from './runner/fresh-dir.js';
import { readerTier } from './runner/reader-tier.js';
import { CheckRecorder } from './runner/record.js';
import { Session } from './runner/session.js';
import { writerTier } from './runner/writer/writer-tier.js';

export { writerRecord } from './runner/writer/support.js';

/** Which tiers a run covers. */
export type ConformanceTier = 'reader' | 'writer' | 'all';

/** Options of {@link runConformance}. */
export interface ConformanceOptions {
  /** The adapter command, run with `sh -c`. */
  readonly adapter: string;
  /** Tiers to run (default `all`: every tier the adapter claims). */
  readonly tier?: ConformanceTier;
  /** Generated reader cases (default 100). */
  readonly runs?: number;
  /** Writer kill rounds (default 20). */
  readonly writerRounds?: number;
  /** Seed of every generated case and kill point (default 20260511). */
  readonly seed?: number;
  /** The expected-failures baseline (TJ-CONF-017). */
  readonly expectedFailures?: ExpectedFailures;
  /** Where the baseline came from, for the report. */
  readonly expectedFailuresPath?: string;
  /** Per-request timeout in milliseconds, before scaling (default 30,000). */
  readonly timeoutMs?: number;
  /**
   * Multiplies every time limit of the run — the per-request timeout and the checks' hang guards — for a slow or loaded
   * machine (default 1; TJ-CONF-044).
   */
  readonly timeoutScale?: number;
  /** The store fixtures directory, `<fixtures root>/v1/store` (default: the kit's own). */
  readonly fixturesDir?: string;
  /** Run the fsync-before-ack check under strace: `auto` (default) when available, or never. */
  readonly strace?: 'auto' | 'never';
  /** Run only the checks whose id starts with one of these prefixes (`adapter/start`, `adapter/stop` and `reader/fixtures` always run). */
  readonly only?: readonly string[];
  /** Called after each check, for progress output. */
  readonly onCheck?: (check: CheckReport, done: number) => void;
}

/** Default seed, shared with the property suites' convention. */
export const DEFAULT_SEED = 20260511;

/**
 * Runs the black-box conformance kit against an adapter (spec/v1/adapter.md): the reader tier (every store fixture
 * of the claimed families, plus generated cases compared with the reference reader) and the writer tier (kill
 * rounds checked against the acknowledgement oracle, restart, lock, torn tail, fsync before ack). Never throws for
 * what the adapter does: every failure is a failed check.
 */
export async function runConformance(options: ConformanceOptions): Promise<ConformanceReport> {
  const tier = options.tier ?? 'all';
  const runs = options.runs ?? 100;
  const writerRounds = options.writerRounds ?? 20;
  const seed = options.seed ?? DEFAULT_SEED;
  const timeoutScale = options.timeoutScale ?? 1;
  const timeoutMs = Math.max(1, Math.round((options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS) * timeoutScale));
  const baseline = new Map((options.expectedFailures?.failures ?? []).map((f) => [f.check, f.reason]));
  const selected = (id: string) =>
    id === 'adapter/start' ||
    id === 'adapter/stop' ||
    id === 'reader/fixtures' ||
    options.only === undefined ||
    options.only.some((prefix) => id.startsWith(prefix));
  const recorder = new CheckRecorder(loadRequirementLevels(), baseline, selected, options.onCheck);
  const session = new Session(options.adapter, timeoutMs);
  let claims: StartResult | null = null;
  try {
    claims = await runChecks(session, recorder, {
      tier,
      runs,
      writerRounds,
      seed,
      timeoutMs,
      timeoutScale,
      adapter: options.adapter,
      strace: options.strace ?? 'auto',
      fixturesDir: options.fixturesDir,
    });
  } finally {
    // Whatever happened, no adapter process outlives the run (a live child would keep the runner from exiting).
    await session.dispose();
  }
  const levels: readonly string[] = claims?.levels ?? [];
  // Partial: --only narrowed the run, or --tier left out a level the adapter claims (or, without a claim, any level).
  const partial =
    options.only !== undefined || (tier !== 'all' && (claims === null || levels.some((level) => level !== tier)));
  // Whether this run could have run a check: its tier ran (selected and claimed) and --only selected it.
  const tierRan = (level: 'reader' | 'writer') => (tier === 'all' || tier === level) && levels.includes(level);
  const judged = (id: string) =>
    selected(id) &&
    (id.startsWith('reader/') ? tierRan('reader') : id.startsWith('writer/') ? tierRan('writer') : true);
  return assembleReport(
    {
      adapter: options.adapter,
      tier,
      runs,
      writerRounds,
      seed,
      timeoutMs,
      timeoutScale,
      expectedFailuresPath: options.expectedFailuresPath,
      claims,
      partial,
      notProven: recorder.unproven,
    },
    recorder.checks,
    { baseline, judged },
  );
}

/** Runs every selected check; returns the adapter's claim, or null when `start` failed. */
async function runChecks(
  session: Session,
  recorder: CheckRecorder,
  settings: {
    readonly tier: ConformanceTier;
    readonly runs: number;
    readonly writerRounds: number;
    readonly seed: number;
    readonly timeoutMs: number;
    readonly timeoutScale: number;
    readonly adapter: string;
    readonly strace: 'auto' | 'never';
    readonly fixturesDir: string | undefined;
  },
): Promise<StartResult | null> {
  const { tier, runs, writerRounds, seed, timeoutMs, timeoutScale } = settings;
  let claims: StartResult | null = null;
  await recorder.record(
    'adapter/start',
    'start answers a valid capability claim, as one JSON response line with the request id',
    'adapter',
    // The first response is where a banner on stdout (TJ-CONF-012), a response over several lines (TJ-CONF-018) or a
    // wrong id (TJ-CONF-019) shows first.
    ['TJ-CONF-001', 'TJ-CONF-024', 'TJ-CONF-012', 'TJ-CONF-018', 'TJ-CONF-019'],
    async () => {
      await session.get();
      claims = session.claims;
      return { failures: [] };
    },
  );
  if (claims === null) return null;
  const claimed: StartResult = claims;

  await recorder.record(
    'adapter/unknown-op',
    'an unknown op is answered with an error response, not by exiting',
    'adapter',
    ['TJ-CONF-015', 'TJ-CONF-022'],
    async () => {
      const process = await session.get();
      try {
        await process.request('x_tj_unknown_op');
        return { failures: ['an unknown op was answered with ok: true'] };
      } catch (error) {
        if (error instanceof AdapterFailure && error.kind === 'error_response') {
          return error.code === 'unsupported'
            ? { failures: [] }
            : { failures: [`expected error code unsupported, got ${error.code}`] };
        }
        throw error;
      }
    },
  );

  await recorder.record(
    'adapter/unknown-members',
    'a request with members this protocol version does not define is served, the members ignored',
    'adapter',
    ['TJ-CONF-021'],
    async () => {
      if (!claimed.levels.includes('reader')) return { skip: 'the adapter does not claim the reader level' };
      const process = await session.get();
      const root = freshDir('tj-conf-members-');
      try {
        // An empty store: the answer's content is the reader tier's business; here only that it is served.
        await process.request('read', { paths: [root], x_tj_future: { hint: 'a later protocol version' } });
        return { failures: [] };
      } catch (error) {
        if (error instanceof AdapterFailure && error.kind === 'error_response')
          return { failures: [`a read with an unknown member was answered ${error.code}: ${error.message}`] };
        throw error;
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
  );

  if (tier !== 'writer') {
    if (!claimed.levels.includes('reader'))
      await recorder.record('reader/claim', 'reader tier', 'reader', ['TJ-CONF-002'], async () => ({
        skip: 'the adapter does not claim the reader level',
      }));
    else
      await readerTier(
        session,
        claimed,
        { fixturesDir: settings.fixturesDir ?? locateStoreFixtures(), runs, seed },
        recorder,
      );
  }
  if (tier !== 'reader') {
    if (!claimed.levels.includes('writer'))
      await recorder.record('writer/claim', 'writer tier', 'writer', ['TJ-CONF-009'], async () => ({
        skip: 'the adapter does not claim the writer level',
      }));
    else
      await writerTier(
        claimed,
        { adapter: settings.adapter, rounds: writerRounds, seed, timeoutMs, timeoutScale, strace: settings.strace },
        recorder,
      );
  }
  await recorder.record(
    'adapter/stop',
    'stop is answered and the adapter exits 0',
    'adapter',
    ['TJ-CONF-015', 'TJ-CONF-023'],
    async () => {
      await session.get();
      const code = await session.close();
      return { failures: code === 0 ? [] : [`the adapter exited with ${code} after stop`] };
    },
  );
  return claimed;
}
