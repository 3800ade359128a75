/**
 * The benchmark harness (issue 6): `pnpm bench [--quick] [--only=id,id] [--out=path] [--keep]`.
 *
 * Every figure is measured as a ratio against its physical floor, taken in the same run, on the same disk: work files
 * go to `bench/.work/` inside the repository (deleted afterwards), so subject and floor share the file system. The
 * reader and the writer are imported from their built `dist` (the code users run; built first with `tsc -b`), and whole-process figures
 * run in child processes under plain `node`. Prints a table and writes `bench/results/latest.json`.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { machineInfo } from './lib/machine.js';
import { nowMs, round } from './lib/stats.js';
import { renderTable } from './lib/table.js';
import type { BenchMode, FigureRow } from './lib/types.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

interface Args {
  readonly mode: BenchMode;
  readonly only: readonly string[] | undefined;
  readonly out: string;
  readonly keep: boolean;
}

function parseArgs(argv: readonly string[]): Args {
  let mode: BenchMode = 'full';
  let only: string[] | undefined;
  let out = join(root, 'bench', 'results', 'latest.json');
  let keep = false;
  for (const arg of argv) {
    if (arg === '--') continue;
    if (arg === '--quick') mode = 'quick';
    else if (arg === '--full') mode = 'full';
    else if (arg === '--keep') keep = true;
    else if (arg.startsWith('--only=')) only = arg.slice('--only='.length).split(',').filter(Boolean);
    else if (arg.startsWith('--out=')) out = resolve(arg.slice('--out='.length));
    else {
      console.error(
        `usage: pnpm bench [--quick] [--only=figure,…] [--out=file.json] [--keep]\nunknown argument ${arg}`,
      );
      process.exit(2);
    }
  }
  return { mode, only, out, keep };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const log = (message: string) => process.stderr.write(`${message}\n`);
  const started = nowMs();
  // Read before the build and the figures, whose own work would count as load.
  const loadBefore = loadavg()[0] ?? 0;
  log('building @turnjournal/schema, reader, writer, live, ai-sdk and postgres (tsc -b)…');
  execFileSync(
    join(root, 'node_modules', '.bin', 'tsc'),
    ['-b', 'packages/writer', 'packages/live', 'packages/ai-sdk', 'packages/postgres'],
    {
      cwd: root,
      stdio: 'inherit',
    },
  );
  // Imported after the build, so a fresh clone measures freshly built code.
  const { FIGURES } = await import('./figures/registry.js');
  const unknown = (args.only ?? []).filter((id) => !FIGURES.some((f) => f.id === id));
  if (unknown.length > 0) {
    console.error(`unknown figure(s): ${unknown.join(', ')}; known: ${FIGURES.map((f) => f.id).join(', ')}`);
    process.exit(2);
  }
  const figures = FIGURES.filter((f) => args.only === undefined || args.only.includes(f.id));
  const work = join(root, 'bench', '.work', `run-${process.pid}`);
  mkdirSync(work, { recursive: true });
  const machine = machineInfo(work);
  log(`${args.mode} run on ${machine.cpuModel}, ${machine.cores} cores, ${machine.fileSystem}, node ${machine.node}`);
  const { READER_PATH } = await import('./lib/reader.js');
  const { WRITER_PATH } = await import('./lib/writer.js');
  log(`reader under test: ${relative(root, READER_PATH)}; writer under test: ${relative(root, WRITER_PATH)}`);
  const rows: FigureRow[] = [];
  const timings: Record<string, number> = {};
  try {
    for (const figure of figures) {
      const workDir = join(work, figure.id);
      mkdirSync(workDir, { recursive: true });
      log(`${figure.id}: ${figure.title}`);
      const t0 = nowMs();
      try {
        rows.push(...(await figure.run({ mode: args.mode, workDir, root, log })));
      } finally {
        if (!args.keep) rmSync(workDir, { recursive: true, force: true });
      }
      const ms = Math.round(nowMs() - t0);
      timings[figure.id] = ms;
      log(`  (${(ms / 1000).toFixed(1)} s)`);
    }
  } finally {
    if (!args.keep) rmSync(work, { recursive: true, force: true });
  }
  // Other processes competing for the CPU or the disk distort subject and floor unequally: say so in the results. Only
  // the load before the run tells: the one-minute average after it is mostly the harness's own work (a full run keeps
  // a core busy for two minutes, and the conformance figure runs two processes), so it is recorded, not judged.
  const loadAfter = loadavg()[0] ?? 0;
  const busy = loadBefore > machine.cores * 0.5;
  const result = {
    schema: 'turnjournal-bench/1',
    date: new Date().toISOString(),
    mode: args.mode,
    machine,
    reader: process.env.TJ_BENCH_READER === undefined ? 'packages/reader/dist' : READER_PATH,
    writer: process.env.TJ_BENCH_WRITER === undefined ? 'packages/writer/dist' : WRITER_PATH,
    workDir: relative(root, join(root, 'bench', '.work')),
    loadAverage: { before: round(loadBefore, 3), after: round(loadAfter, 3) },
    quiet: !busy,
    durationSeconds: Math.round((nowMs() - started) / 100) / 10,
    figureSeconds: Object.fromEntries(Object.entries(timings).map(([k, v]) => [k, v / 1000])),
    figures: rows,
  };
  mkdirSync(dirname(args.out), { recursive: true });
  const tmp = `${args.out}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(result, null, 2)}\n`);
  renameSync(tmp, args.out);
  // The results file is committed: format it as the repository's formatter would, so `biome check` stays clean.
  spawnSync(join(root, 'node_modules', '.bin', 'biome'), ['format', '--write', args.out], {
    cwd: root,
    stdio: 'ignore',
  });
  process.stdout.write(`\n${renderTable(rows)}\n\n`);
  process.stdout.write(
    `${args.mode} run, ${result.durationSeconds} s; ${machine.cpuModel} (${machine.cores} cores, ` +
      `${(machine.memoryBytes / 2 ** 30).toFixed(1)} GiB), ${machine.fileSystem} on ${machine.device}, node ${machine.node}\n` +
      `results: ${relative(root, args.out)}\n`,
  );
  if (busy) {
    process.stdout.write(
      `WARNING: the 1-minute load average was ${round(loadBefore, 3)} before the run on ${machine.cores} cores: other ` +
        `work competed with the benchmark, so ratios are not reliable. Publish a quiet run.\n`,
    );
  }
}

await main();
