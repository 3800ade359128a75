// Measures the CLI on every hostile input (issue 11, defect 8) with /usr/bin/time -v: peak RSS, wall time, exit code
// and the first line of output, 120 s cap per run. Usage, after a build:
//   node packages/conformance/test/hostile/measure.mjs [--full] [case...]
// Sizes are small unless --full (or TJ_HOSTILE_FULL=1) is given. Prints one line per run.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as gen from './generators.mjs';

const here = dirname(fileURLToPath(import.meta.url));
// TJ_HOSTILE_CLI runs another build (for a before/after comparison).
const cli = process.env.TJ_HOSTILE_CLI ?? join(here, '..', '..', 'dist', 'cli', 'main.js');
const args = process.argv.slice(2);
const full = args.includes('--full') || process.env.TJ_HOSTILE_FULL === '1';
const only = args.filter((a) => !a.startsWith('--'));

// The reader's hostile turn journals (issue 11, defect 8): one journal of N records, built by its generator.
const turnJournals = (kind) => (root) => {
  const generator = join(here, '..', '..', '..', 'reader', 'test', 'hostile', 'generate-turn-journals.mjs');
  execFileSync(process.execPath, [generator, kind, root], {
    env: { ...process.env, TJ_HOSTILE_FULL: full ? '1' : '0' },
  });
  return { store: root };
};
const checkAndAudit = (s) => [
  ['check', s.store],
  ['audit', s.store],
];
// Stores whose turns are abandoned, or many: `recover` (the plan only) holds what `audit` does. Applying it is left
// out: each planned turn opens its journal, which reads the journal again, so 2 M orphans of one file never finish.
const checkAuditRecover = (s) => [...checkAndAudit(s), ['recover', s.store]];

const cases = {
  'fifo-journal': {
    make: (r) => gen.fifoJournal(r),
    runs: (s) => [
      ['validate', s.store],
      ['validate', s.special],
      ['check', s.store],
      ['check', s.special],
    ],
  },
  'fifo-state': {
    make: (r) => gen.fifoState(r),
    runs: (s) => [
      ['validate', s.store],
      ['validate', s.special],
      ['check', s.store],
    ],
  },
  'zero-link': {
    make: (r) => gen.zeroLink(r),
    runs: (s) => [
      ['validate', s.store],
      ['validate', s.special],
      ['check', s.store],
      ['check', s.special],
    ],
  },
  'root-link': {
    make: (r) => gen.rootLink(r),
    runs: (s) => [
      ['validate', s.store],
      ['check', s.store],
    ],
  },
  'many-bad-lines': {
    // TJ_HOSTILE_BAD="journals,lines" picks another size.
    make: (r) =>
      gen.manyBadLines(r, ...(process.env.TJ_HOSTILE_BAD?.split(',').map(Number) ?? (full ? [5000, 1000] : [50, 100]))),
    runs: (s) => [
      ['check', s.store],
      ['audit', s.store],
      ['audit', '--format', 'json', s.store],
    ],
  },
  'many-sessions': {
    make: (r) => (full ? gen.manySessions(r, 100_000) : gen.manySessions(r, 1000)),
    runs: checkAuditRecover,
  },
  // 100,000 sessions of one abandoned turn each: a plan of 100,000 entries. Applying it is left out: each turn's
  // journal is opened, locked, appended to and synced, about 60 ms a turn on a loaded machine of 2 cores.
  'many-pending': {
    make: (r) => gen.manySessions(r, full ? 100_000 : 1000, true),
    runs: checkAuditRecover,
  },
  // 2 M records of 2 M turns with no submitted (10,000 unless --full).
  orphans: { make: turnJournals('orphans'), runs: checkAuditRecover },
  // 1 M turns of submitted + completed.
  turns: { make: turnJournals('turns'), runs: checkAndAudit },
  // 1 M distinct worker_started records of one turn.
  duplicates: { make: turnJournals('duplicates'), runs: checkAndAudit },
  'unsafe-seq': {
    make: (r) => gen.unsafeSeq(r),
    runs: (s) => [
      ['inspect', s.store],
      ['validate', s.file],
    ],
  },
};

for (const [name, c] of Object.entries(cases)) {
  if (only.length > 0 && !only.includes(name)) continue;
  const root = mkdtempSync(join(tmpdir(), `tj-hostile-${name}-`));
  try {
    const store = c.make(root);
    for (const run of c.runs(store)) {
      const r = spawnSync(
        'timeout',
        ['-s', 'KILL', process.env.TJ_HOSTILE_CAP ?? '120', '/usr/bin/time', '-v', process.execPath, cli, ...run],
        {
          encoding: 'utf8',
          maxBuffer: 1 << 30,
        },
      );
      const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr)?.[1];
      const wall = /Elapsed \(wall clock\) time.*: (.+)/.exec(r.stderr)?.[1];
      const user = Number(/User time \(seconds\): ([\d.]+)/.exec(r.stderr)?.[1] ?? Number.NaN);
      const system = Number(/System time \(seconds\): ([\d.]+)/.exec(r.stderr)?.[1] ?? Number.NaN);
      const exit = /Exit status: (\d+)/.exec(r.stderr)?.[1] ?? `killed (${r.status ?? r.signal})`;
      const first = (r.stdout.split('\n')[0] || r.stderr.split('\n').find((l) => !l.startsWith('\t')) || '').slice(
        0,
        110,
      );
      const shown = run.map((a) => a.replace(root, '<root>')).join(' ');
      console.log(
        `${name} | ${shown} | exit ${exit} | ${wall ?? 'killed at the cap'} wall, ${(user + system).toFixed(1)} s CPU | ${rss === undefined ? '?' : `${Math.round(Number(rss) / 1024)} MiB`} | ${first}`,
      );
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
