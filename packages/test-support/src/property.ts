// The one convention of every property suite in the repository: a fixed seed and run count (reproducible CI),
// TJ_PROPERTY_RUNS to run more (or fewer), TJ_PROPERTY_SEED to replay a reported failure (spec TJ-CONF-010).
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { countSetting, seedSetting } from './settings.js';

/** Run count of a property when TJ_PROPERTY_RUNS is unset and the suite names no budget of its own. */
export const DEFAULT_PROPERTY_RUNS = 100;
/** Seed of every property when TJ_PROPERTY_SEED is unset. */
export const DEFAULT_PROPERTY_SEED = 20260511;

/** The seed of every property: TJ_PROPERTY_SEED when set, otherwise {@link DEFAULT_PROPERTY_SEED}. */
export function propertySeed(env: NodeJS.ProcessEnv = process.env): number {
  return seedSetting('TJ_PROPERTY_SEED', DEFAULT_PROPERTY_SEED, env);
}

/**
 * The run count of a property: TJ_PROPERTY_RUNS when set (it replaces every suite's budget, so one variable
 * scales the whole repository), otherwise `defaultRuns`, the suite's own budget.
 */
export function propertyRuns(
  defaultRuns: number = DEFAULT_PROPERTY_RUNS,
  env: NodeJS.ProcessEnv = process.env,
): number {
  return countSetting('TJ_PROPERTY_RUNS', defaultRuns, env);
}

/**
 * What a suite may set besides the shared settings: its own run budget (`defaultRuns`, which TJ_PROPERTY_RUNS
 * replaces) and fast-check options. `seed` and `numRuns` are not among them, so no suite can pin its own again.
 */
export type PropertyOverrides<T> = Omit<fc.Parameters<T>, 'seed' | 'numRuns'> & { readonly defaultRuns?: number };

/** Parameters for `fc.assert` / `fc.check`: the seed and run count above, plus the suite's own `overrides`. */
export function propertyParameters<T>(overrides: PropertyOverrides<T> = {}): fc.Parameters<T> {
  const { defaultRuns, ...parameters } = overrides;
  return { ...parameters, seed: propertySeed(), numRuns: propertyRuns(defaultRuns) };
}

/** Directory under which failed properties write their counterexamples. */
export function propertyFailureRoot(): string {
  return join(tmpdir(), 'turnjournal-property-failures');
}

/**
 * Runs `property` with {@link propertyParameters}; prints runs, seed and time; on failure prints the seed, the path
 * and the shrunk counterexample (plus `explain(counterexample)`, when given), writes them to a file of their own, and
 * throws. The file is in a fresh directory per failure, so concurrent runs never overwrite each other's report.
 */
export async function checkProperty<Ts>(
  name: string,
  property: fc.IAsyncProperty<Ts> | fc.IProperty<Ts>,
  options: {
    defaultRuns: number;
    explain?: (counterexample: Ts) => string;
    parameters?: Omit<fc.Parameters<Ts>, 'seed' | 'numRuns'>;
  },
): Promise<void> {
  const parameters = propertyParameters<Ts>({ ...options.parameters, defaultRuns: options.defaultRuns });
  const started = performance.now();
  const details = await fc.check(property as fc.IAsyncProperty<Ts>, parameters);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (!details.failed) {
    console.log(`[property] ${name}: ${details.numRuns} runs, seed ${parameters.seed}, ${seconds} s`);
    return;
  }
  const report = failureReport(name, details, options.explain);
  const file = writeFailureReport(name, details.seed, report);
  console.error(`${report}\ncounterexample written to ${file}`);
  throw new Error(`${report}\ncounterexample written to ${file}`);
}

function failureReport<Ts>(name: string, details: fc.RunDetails<Ts>, explain?: (counterexample: Ts) => string): string {
  const counterexample = details.counterexample;
  let explanation = '';
  if (counterexample !== null && explain !== undefined) {
    try {
      explanation = explain(counterexample);
    } catch (error) {
      explanation = `(explain failed: ${String(error)})`;
    }
  }
  const error = details.errorInstance;
  return [
    `property failed: ${name}`,
    `seed: ${details.seed}`,
    `path: ${details.counterexamplePath}`,
    `replay: TJ_PROPERTY_SEED=${details.seed} (fast-check path ${details.counterexamplePath})`,
    `counterexample: ${counterexample === null ? '(none)' : fc.stringify(counterexample)}`,
    ...(explanation === '' ? [] : [`explanation:\n${explanation}`]),
    `error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
  ].join('\n');
}

/** Writes `report` to `<root>/<name>-<seed>-XXXXXX/counterexample.txt` (mkdtemp: unique per failure) and returns the path. */
export function writeFailureReport(name: string, seed: number, report: string, root = propertyFailureRoot()): string {
  mkdirSync(root, { recursive: true });
  const slug = name.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 100);
  const dir = mkdtempSync(join(root, `${slug}-${seed}-`));
  const file = join(dir, 'counterexample.txt');
  writeFileSync(file, `${report}\n`);
  return file;
}
