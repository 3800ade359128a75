// Shared conventions of the property suites: a fixed seed and run count from the environment (TJ_PROPERTY_SEED,
// TJ_PROPERTY_RUNS), a report of runs, seed and time for every property, and on failure the seed, the path and the
// shrunk counterexample printed and written to a file under the OS temp dir (TJ-CONF-010).
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { propertyRuns, propertySeed } from '../../../schema/test/support/property.js';

export { propertyRuns, propertySeed } from '../../../schema/test/support/property.js';

function stringify(value: unknown): string {
  return fc.stringify(value);
}

/**
 * Runs `property` with the fixed seed and run count; prints runs, seed and time; on failure prints and writes the
 * seed, the path and the shrunk counterexample (plus `explain(counterexample)`, when given) and throws.
 */
export async function checkProperty<Ts>(
  name: string,
  property: fc.IAsyncProperty<Ts> | fc.IProperty<Ts>,
  options: { defaultRuns: number; explain?: (counterexample: Ts) => string; parameters?: fc.Parameters<Ts> },
): Promise<void> {
  const seed = propertySeed();
  const numRuns = propertyRuns(options.defaultRuns);
  const started = performance.now();
  const details = await fc.check(property as fc.IAsyncProperty<Ts>, { ...options.parameters, seed, numRuns });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (!details.failed) {
    console.log(`[property] ${name}: ${details.numRuns} runs, seed ${seed}, ${seconds} s`);
    return;
  }
  const counterexample = details.counterexample as Ts | null;
  let explanation = '';
  if (counterexample !== null && options.explain !== undefined) {
    try {
      explanation = options.explain(counterexample);
    } catch (error) {
      explanation = `(explain failed: ${String(error)})`;
    }
  }
  const report = [
    `property failed: ${name}`,
    `seed: ${details.seed}`,
    `path: ${details.counterexamplePath}`,
    `replay: TJ_PROPERTY_SEED=${details.seed} (fast-check path ${details.counterexamplePath})`,
    `counterexample: ${counterexample === null ? '(none)' : stringify(counterexample)}`,
    ...(explanation === '' ? [] : [`explanation:\n${explanation}`]),
    `error: ${details.errorInstance instanceof Error ? (details.errorInstance.stack ?? details.errorInstance.message) : String(details.errorInstance)}`,
  ].join('\n');
  const dir = join(tmpdir(), 'turnjournal-property-failures');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 100)}-${details.seed}.txt`);
  writeFileSync(file, `${report}\n`);
  console.error(`${report}\ncounterexample written to ${file}`);
  throw new Error(`${report}\ncounterexample written to ${file}`);
}

/** A `RandomSource` for the simulator drawn from fast-check, so crash decisions shrink and replay with the seed. */
export function randomSourceArbitrary(): fc.Arbitrary<number> {
  return fc.integer({ min: 0, max: 0x7fffffff });
}
