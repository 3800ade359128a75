import { readFileSync, writeFileSync } from 'node:fs';
import { Compile } from 'typebox/compile';
import { isStoreUrl, withoutPassword } from '../cli/store-target.js';
import { ConformanceError } from '../errors.js';
import { CONFORMANCE_FORMATS, type ConformanceFormat, formatConformanceReport } from './format.js';
import { runAdapter } from './reference-adapter.js';
import { type StoreLinesImplementation, storeLinesImplementation } from './reference-store-lines.js';
import { type ConformanceReport, ExpectedFailures } from './report.js';
import { type ConformanceTier, runConformance } from './runner.js';
import {
  fileStoreLinesBinding,
  postgresStoreLinesBinding,
  type StoreLinesBinding,
  StoreLinesUrlError,
} from './store-lines-bindings.js';

/** Options of the `conformance` command as parsed by the CLI. */
export interface ConformanceCommandOptions {
  /** `--adapter`. */
  readonly adapter?: string;
  /** `--tier`. */
  readonly tier?: string;
  readonly runs?: string;
  readonly seed?: string;
  readonly format?: string;
  readonly 'expected-failures'?: string;
  readonly report?: string;
  readonly timeout?: string;
  readonly 'timeout-scale'?: string;
  readonly only?: string;
}

const expectedFailuresValidator = Compile(ExpectedFailures);

function integer(name: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^-?\d+$/.test(value) || Number(value) < min)
    throw new ConformanceError('usage', `--${name} must be an integer ≥ ${min}, got "${value}"`);
  return Number(value);
}

/**
 * The time-limit scale (TJ-CONF-044): `--timeout-scale`, else the `TURNJOURNAL_TIMEOUT_SCALE` environment variable; a
 * positive number, at most 1000 (a limit of hours is a hang too).
 */
function scale(option: string | undefined, environment: string | undefined): number | undefined {
  const [value, source] =
    option !== undefined ? [option, '--timeout-scale'] : [environment, 'TURNJOURNAL_TIMEOUT_SCALE'];
  if (value === undefined || (option === undefined && value.trim() === '')) return undefined;
  const number = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value.trim()) || !(number > 0) || number > 1000)
    throw new ConformanceError('usage', `${source} must be a number above 0 and at most 1000, got "${value}"`);
  return number;
}

/**
 * Exit status of `turnjournal conformance`: 0 every check passed (TJ-CONF-016), 1 a check failed or a baseline entry
 * is stale (TJ-CONF-017), 2 usage error, 4 nothing failed but a check a claimed level needs was skipped (no strace):
 * the claim is not proven. Distinct from 1 so that CI can tell "broken" from "could not check".
 */
export const CONFORMANCE_EXIT = { passed: 0, failed: 1, usage: 2, notProven: 4 } as const;

/** The exit status a report earns. */
export function conformanceExitStatus(report: ConformanceReport): number {
  if (!report.ok) return CONFORMANCE_EXIT.failed;
  return report.not_proven.length > 0 ? CONFORMANCE_EXIT.notProven : CONFORMANCE_EXIT.passed;
}

/**
 * `turnjournal conformance --adapter "<command>"`: runs the kit and prints the report; returns the exit status
 * ({@link CONFORMANCE_EXIT}).
 */
export async function conformanceCommand(values: ConformanceCommandOptions): Promise<number> {
  if (values.adapter === undefined || values.adapter.trim() === '')
    throw new ConformanceError('usage', 'conformance: --adapter "<command>" is required');
  const tier = (values.tier ?? 'all') as ConformanceTier;
  if (!['reader', 'writer', 'all'].includes(tier))
    throw new ConformanceError('usage', `--tier must be one of reader, writer, all, got "${tier}"`);
  const format = (values.format ?? 'text') as ConformanceFormat;
  if (!CONFORMANCE_FORMATS.includes(format))
    throw new ConformanceError('usage', `--format must be one of ${CONFORMANCE_FORMATS.join(', ')}, got "${format}"`);
  const runs = integer('runs', values.runs, 0);
  const seed = integer('seed', values.seed, 0);
  const timeoutMs = integer('timeout', values.timeout, 1);
  const timeoutScale = scale(values['timeout-scale'], process.env.TURNJOURNAL_TIMEOUT_SCALE);
  let expectedFailures: ExpectedFailures | undefined;
  const baselinePath = values['expected-failures'];
  if (baselinePath !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(baselinePath, 'utf8'));
    } catch (error) {
      throw new ConformanceError('usage', `--expected-failures ${baselinePath}: ${(error as Error).message}`);
    }
    if (!expectedFailuresValidator.Check(parsed)) {
      const first = expectedFailuresValidator.Errors(parsed)[0];
      throw new ConformanceError(
        'usage',
        `--expected-failures ${baselinePath}: expected {"failures":[{"check","reason"}]}: ${first?.instancePath || '(root)'} ${first?.message ?? ''}`,
      );
    }
    expectedFailures = parsed;
  }
  const progress = process.stderr.isTTY === true;
  const report = await runConformance({
    adapter: values.adapter,
    tier,
    ...(runs === undefined ? {} : { runs, writerRounds: runs }),
    ...(seed === undefined ? {} : { seed }),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(timeoutScale === undefined ? {} : { timeoutScale }),
    ...(values.only === undefined ? {} : { only: values.only.split(',').filter((p) => p !== '') }),
    ...(expectedFailures === undefined ? {} : { expectedFailures, expectedFailuresPath: baselinePath }),
    ...(progress
      ? {
          onCheck: (check, done) =>
            process.stderr.write(`\r\x1b[K[${done}] ${check.status.padEnd(8)} ${check.id}`.slice(0, 160)),
        }
      : {}),
  });
  if (progress) process.stderr.write('\r\x1b[K');
  const output = formatConformanceReport(report, format);
  process.stdout.write(output);
  if (values.report !== undefined) writeFileSync(values.report, formatConformanceReport(report, 'json'));
  return conformanceExitStatus(report);
}

/**
 * `turnjournal adapter`: the reference adapter over stdin/stdout; exits 0 after `stop`. With `storeLines`, its writer
 * on a record store apart from the paths named (feature `store-lines`): `true` for a file store beside them, a
 * `postgres://` URL for a PostgreSQL database (one store per harness root).
 */
export async function adapterCommand(storeLines: boolean | string = false): Promise<number> {
  const implementation = await storeLinesOf(storeLines);
  await runAdapter(process.stdin, process.stdout, implementation);
  // Stop reading: the harness may keep stdin open, and the adapter must exit after stop.
  process.stdin.destroy();
  // The stores' connections keep the process alive until they are released.
  await implementation?.close();
  return 0;
}

/** The store-lines implementation the option asks for, or undefined for the reference adapter on files. */
async function storeLinesOf(storeLines: boolean | string): Promise<StoreLinesImplementation | undefined> {
  if (storeLines === false) return undefined;
  if (storeLines === true) return storeLinesImplementation(fileStoreLinesBinding);
  if (!isStoreUrl(storeLines))
    throw new ConformanceError(
      'usage',
      `adapter: --store-lines=<url> takes a postgres:// URL, got "${withoutPassword(storeLines)}"`,
    );
  let binding: StoreLinesBinding;
  try {
    binding = await postgresStoreLinesBinding(storeLines);
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND')
      throw new ConformanceError(
        'usage',
        'adapter: --store-lines=postgres://… needs the @turnjournal/postgres package installed beside @turnjournal/conformance',
      );
    if (error instanceof StoreLinesUrlError) throw new ConformanceError('usage', `adapter: ${error.message}`);
    throw error;
  }
  return storeLinesImplementation(binding);
}
