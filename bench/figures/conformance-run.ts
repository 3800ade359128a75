import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { nowMs, round } from '../lib/stats.js';
import type { Figure, FigureRow } from '../lib/types.js';
import { pendingRow } from './pending.js';

/**
 * Wall time of the default `turnjournal conformance` run against the reference adapter (`turnjournal adapter`), as a
 * user runs it: the built CLI, default options. Full runs only; pending while the conformance package does not build
 * or has no `conformance` command.
 */
export const conformanceRun: Figure = {
  id: 'conformance-run',
  title: 'default conformance run on the reference adapter',
  async run(context): Promise<FigureRow[]> {
    const base = {
      id: 'conformance-run',
      name: 'default `turnjournal conformance` run, reference adapter',
      unit: 's',
      floor: null,
      direction: 'lower' as const,
      target: 'value <= 120 s on 2 cores',
    };
    // A default run of the kit takes longer than a quick run's whole budget (bench/results/history.md, "Figures that
    // were in code comments").
    if (context.mode === 'quick') return [pendingRow({ ...base, reason: 'measured in full runs only' })];
    const build = spawnSync(join(context.root, 'node_modules', '.bin', 'tsc'), ['-b', 'packages/conformance'], {
      cwd: context.root,
      encoding: 'utf8',
    });
    if (build.status !== 0) return [pendingRow({ ...base, reason: 'pending (conformance package does not build)' })];
    const cli = join(context.root, 'packages', 'conformance', 'dist', 'cli', 'main.js');
    const report = join(context.workDir, 'report.json');
    const start = nowMs();
    const run = spawnSync(
      process.execPath,
      [cli, 'conformance', '--adapter', `node ${cli} adapter`, '--format', 'json', '--report', report],
      { cwd: context.root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    );
    const seconds = (nowMs() - start) / 1000;
    if (run.status === 2) return [pendingRow({ ...base, reason: 'pending (no `turnjournal conformance` command)' })];
    context.log(`  conformance run: exit ${run.status}, ${seconds.toFixed(1)} s`);
    return [
      {
        ...base,
        value: round(seconds),
        ratio: null,
        met: seconds <= 120 && run.status === 0,
        status: 'measured',
        note: `exit ${run.status}${run.status === 0 ? '' : ' (checks failed: the target needs a passing run)'}; one run, wall time, including the adapter's start-up`,
        details: { exitStatus: run.status },
      },
    ];
  },
};
