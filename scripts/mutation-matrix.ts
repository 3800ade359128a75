/**
 * The mutation matrix (issue 12 §1): every mutant — a base adapter with one defect switched on — is run against the
 * conformance checks that cite the requirement it breaks, and must fail at least one of them. Writes
 * spec/v1/mutation-matrix.json (requirement id → mutant → failing check ids) and prints caught/total per spec section.
 *
 * Exits 1 when a mutant survives (no check citing its requirement failed), or when a requirement of level MUST / MUST
 * NOT has neither a mutant nor an entry in spec/v1/mutation-exemptions.json (`exempt` with a reason, or `pending`).
 *
 *   pnpm mutation-matrix          each mutant runs only the checks citing its requirement ids (CI)
 *   pnpm mutation-matrix --full   each mutant runs the complete default conformance run (slow; on demand)
 *   pnpm mutation-matrix --mutants=reference:no-fsync,python:no-poison
 *                                 only the named mutants (inner loop): reports them, writes nothing, judges no coverage
 *   pnpm mutation-matrix --jobs=N  N mutants at a time (default 2, or TJ_MATRIX_JOBS)
 *   pnpm mutation-matrix --catalogue=<report.json>
 *                                 take the checks and the ids they cite from the JSON report (`conformance --report`)
 *                                 of a green run of the reference adapter of this build, instead of running it again
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ConformanceReport } from '../packages/conformance/src/adapter/report.js';
import { GENERATED_REQUIREMENTS } from '../packages/conformance/src/adapter/runner/reader-tier.js';
import { runConformance } from '../packages/conformance/src/adapter/runner.js';
import { startPostgres } from '../packages/test-support/src/postgres-server.js';
import { MUTANTS } from './mutants/index.js';

const root = join(import.meta.dirname, '..');
const full = process.argv.includes('--full');
const mutantsArg = process.argv.find((a) => a.startsWith('--mutants='));
const selected = mutantsArg === undefined ? undefined : new Set(mutantsArg.slice('--mutants='.length).split(','));

const cli = `node ${join(root, 'packages/conformance/dist/cli/main.js')}`;

interface Requirement {
  readonly id: string;
  readonly level: string;
  readonly section: string;
}

const requirements = (
  JSON.parse(readFileSync(join(root, 'spec/v1/requirements.json'), 'utf8')) as { requirements: Requirement[] }
).requirements;
const reviewed = JSON.parse(readFileSync(join(root, 'spec/v1/mutation-exemptions.json'), 'utf8')) as {
  exempt: Record<string, string>;
  pending: string[];
};

if (selected !== undefined) {
  const unknown = [...selected].filter((name) => !MUTANTS.some((m) => m.name === name));
  if (unknown.length > 0) {
    process.stderr.write(`mutation-matrix: no mutant named ${unknown.join(', ')}\n`);
    process.exit(2);
  }
}
const started = performance.now();
// The catalogue of checks and the ids they cite comes from one run of the unbroken reference adapter, which must pass:
// a mutant is only meaningful against a base that is green.
const catalogueArg = process.argv.find((a) => a.startsWith('--catalogue='));
const catalogue: Pick<ConformanceReport, 'checks'> =
  catalogueArg === undefined
    ? await runConformance({ adapter: `${cli} adapter`, runs: 1, writerRounds: 1 })
    : (JSON.parse(readFileSync(catalogueArg.slice('--catalogue='.length), 'utf8')) as ConformanceReport);
const notGreen = catalogue.checks.filter((c) => c.status !== 'passed');
if (notGreen.length > 0) {
  process.stderr.write(
    `the reference adapter is not green: ${notGreen.map((c) => `${c.id} ${c.status}`).join(', ')}\n`,
  );
  process.exit(1);
}
const citing = (ids: readonly string[]): string[] => {
  // A generated case's id names one case of the catalogue's run, which may have had fewer (`runs: 1`): its class
  // (`reader/generated-sizes`) selects every case the mutant's run has.
  const checks = catalogue.checks
    .filter((c) => c.requirements.some((r) => ids.includes(r)))
    .map((c) => (c.id.startsWith('reader/generated-') ? c.id.replace(/#\d+$/, '') : c.id));
  if (ids.some((id) => GENERATED_REQUIREMENTS.includes(id))) checks.push('reader/generated');
  return checks;
};

const matrix: Record<string, Record<string, string[]>> = {};
const survivors: string[] = [];

/** One mutant's run: the checks that failed it and cite a requirement it breaks, and the line that reports it. */
interface Verdict {
  readonly caughtBy: ConformanceReport['checks'];
  readonly line: string;
}

async function judgeMutant(mutant: (typeof MUTANTS)[number]): Promise<Verdict> {
  const only = citing(mutant.requirements);
  const t0 = performance.now();
  const tiers = new Set(only.map((id) => id.split('/')[0]));
  const report = await runConformance({
    adapter: mutant.command,
    ...(mutant.timeoutMs === undefined ? {} : { timeoutMs: mutant.timeoutMs }),
    ...(mutant.timeoutScale === undefined ? {} : { timeoutScale: mutant.timeoutScale }),
    ...(full
      ? {}
      : {
          only,
          runs: 5,
          writerRounds: 5,
          tier: tiers.has('reader') && !tiers.has('writer') ? 'reader' : !tiers.has('reader') ? 'writer' : 'all',
        }),
  });
  const failing = report.checks.filter((c) => c.status === 'failed' || c.status === 'warning');
  // Traceability: the mutant counts as caught only by a failing check that cites a requirement it breaks.
  const caughtBy = failing.filter((c) => c.requirements.some((r) => mutant.requirements.includes(r)));
  const seconds = ((performance.now() - t0) / 1000).toFixed(1);
  const line =
    caughtBy.length === 0
      ? `SURVIVED ${mutant.name} [${mutant.requirements.join(', ')}] (${only.length} checks, ${seconds} s)${failing.length > 0 ? `; failed only checks citing other ids: ${failing.map((c) => c.id).join(', ')}` : ''}\n`
      : `caught   ${mutant.name} by ${caughtBy.map((c) => c.id).join(', ')} (${seconds} s)\n`;
  return { caughtBy, line };
}

// Mutants run `jobs` at a time: most of a mutant's time is its adapter process starting, syncing and being killed, so
// two at once on two cores take about half the time of one after the other (CI's budget). Lines are printed and the
// matrix is filled in catalogue order, whatever order the runs end in.
const jobsArg =
  process.argv.find((a) => a.startsWith('--jobs='))?.slice('--jobs='.length) ?? process.env.TJ_MATRIX_JOBS;
const jobs = jobsArg === undefined ? 2 : Number(jobsArg);
if (!Number.isInteger(jobs) || jobs < 1) {
  process.stderr.write(`mutation-matrix: --jobs must be a positive integer, not ${jobsArg}\n`);
  process.exit(2);
}
const queue = MUTANTS.filter((mutant) => selected === undefined || selected.has(mutant.name));
// Mutants on a PostgreSQL store need a database: a throwaway server, started here (one clear line when it cannot be)
// and stopped when the process exits, whichever way it does.
if (queue.some((mutant) => mutant.postgres === true)) {
  let server: ReturnType<typeof startPostgres>;
  try {
    server = startPostgres();
  } catch (error) {
    process.stderr.write(`mutation-matrix: ${(error as Error).message}\n`);
    process.exit(1);
  }
  process.on('exit', () => server.stop());
  process.env.TJ_MUTANT_POSTGRES_URL = server.connectionString;
}
const settle: ((verdict: Promise<Verdict>) => void)[] = [];
const verdicts = queue.map(() => new Promise<Verdict>((resolve) => settle.push(resolve)));
let next = 0;
const slots = Array.from({ length: Math.min(jobs, queue.length) }, async () => {
  while (next < queue.length) {
    const index = next;
    next += 1;
    const verdict = judgeMutant(queue[index] as (typeof MUTANTS)[number]);
    (settle[index] as (verdict: Promise<Verdict>) => void)(verdict);
    await verdict.catch(() => undefined);
  }
});
for (const [index, mutant] of queue.entries()) {
  const { caughtBy, line } = await (verdicts[index] as Promise<Verdict>);
  if (caughtBy.length === 0) survivors.push(mutant.name);
  process.stdout.write(line);
  for (const id of mutant.requirements) {
    const checks = caughtBy.filter((c) => c.requirements.includes(id)).map((c) => c.id);
    matrix[id] ??= {};
    (matrix[id] as Record<string, string[]>)[mutant.name] = checks;
  }
}
await Promise.all(slots);

if (selected !== undefined) {
  process.stdout.write(
    `\n${selected.size - survivors.length}/${selected.size} selected mutants caught (nothing written)\n`,
  );
  process.exit(survivors.length > 0 ? 1 : 0);
}
// Coverage of the violable requirements: every MUST / MUST NOT has a mutant that caught it, or a reviewed entry.
const musts = requirements.filter((r) => r.level === 'MUST' || r.level === 'MUST NOT');
const caught = (id: string) => Object.values(matrix[id] ?? {}).some((checks) => checks.length > 0);
const unreviewed = musts.filter((r) => !caught(r.id) && !(r.id in reviewed.exempt) && !reviewed.pending.includes(r.id));
const sections = new Map<string, { caught: number; exempt: number; pending: number; total: number }>();
for (const r of musts) {
  const area = r.id.split('-')[1] as string;
  const s = sections.get(area) ?? { caught: 0, exempt: 0, pending: 0, total: 0 };
  s.total++;
  if (caught(r.id)) s.caught++;
  else if (r.id in reviewed.exempt) s.exempt++;
  else if (reviewed.pending.includes(r.id)) s.pending++;
  sections.set(area, s);
}
const bySection = Object.fromEntries([...sections].sort(([a], [b]) => a.localeCompare(b)));
writeFileSync(
  join(root, 'spec/v1/mutation-matrix.json'),
  `${JSON.stringify(
    {
      description:
        'Generated by scripts/mutation-matrix.ts; do not edit. requirement id → mutant → the check ids (citing that requirement) that failed it.',
      mode: full ? 'full' : 'citing-checks',
      matrix: Object.fromEntries(Object.entries(matrix).sort(([a], [b]) => a.localeCompare(b))),
      sections: bySection,
    },
    null,
    2,
  )}\n`,
);
process.stdout.write('\narea      caught exempt pending  total (MUST / MUST NOT)\n');
for (const [area, s] of Object.entries(bySection))
  process.stdout.write(
    `${area.padEnd(8)} ${[s.caught, s.exempt, s.pending, s.total].map((n) => String(n).padStart(6)).join(' ')}\n`,
  );
process.stdout.write(
  `\n${MUTANTS.length - survivors.length}/${MUTANTS.length} mutants caught in ${((performance.now() - started) / 1000).toFixed(0)} s${full ? ' (--full)' : ''}\n`,
);
if (unreviewed.length > 0)
  process.stdout.write(
    `${unreviewed.length} MUST requirement(s) with no mutant and no entry in spec/v1/mutation-exemptions.json: ${unreviewed.map((r) => r.id).join(', ')}\n`,
  );
// The pending list only shrinks: an id a mutant now catches must leave it.
const stalePending = reviewed.pending.filter((id) => caught(id) || id in reviewed.exempt);
if (stalePending.length > 0)
  process.stdout.write(
    `${stalePending.length} pending entr${stalePending.length === 1 ? 'y is' : 'ies are'} now caught or exempt: remove ${stalePending.join(', ')} from spec/v1/mutation-exemptions.json\n`,
  );
process.exit(survivors.length > 0 || unreviewed.length > 0 || stalePending.length > 0 ? 1 : 0);
