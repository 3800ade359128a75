import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeStore } from '../generate/store.js';
import { reader } from '../lib/reader.js';
import { alternate, median, round, throughputRow } from '../lib/stats.js';
import type { Figure, FigureRow } from '../lib/types.js';

/**
 * Startup scan + audit of a store of many session journals (`auditStore([root])`: discovery, read, validate, derive,
 * lock status, audit findings, recovery plan) against the raw floor: list the directory, read every file whole,
 * split on LF and JSON.parse every line.
 */
export const startupAudit: Figure = {
  id: 'startup-audit',
  title: 'startup scan + audit of many session journals vs read + JSON.parse',
  async run(context): Promise<FigureRow[]> {
    const sessions = context.mode === 'quick' ? 1_000 : 10_000;
    const iterations = context.mode === 'quick' ? 3 : 5;
    const root = join(context.workDir, 'store');
    const stats = writeStore(root, { sessions, seed: 4 });
    context.log(`  store: ${sessions} journals, ${(stats.bytes / 1e6).toFixed(1)} MB, ${stats.turns} turns`);

    let planned = 0;
    let files = 0;
    const audit = async () => {
      const result = await reader.auditStore([root]);
      planned = result.plan.length;
      files = result.check.files.length;
    };
    const floor = () => {
      const dir = join(root, '_turn_journal');
      let lines = 0;
      for (const name of readdirSync(dir)) {
        const text = readFileSync(join(dir, name), 'utf8');
        let from = 0;
        for (let lf = text.indexOf('\n'); lf >= 0; lf = text.indexOf('\n', from)) {
          JSON.parse(text.slice(from, lf));
          lines += 1;
          from = lf + 1;
        }
      }
      return lines;
    };
    const samples = await alternate(iterations, audit, floor);
    if (files !== sessions) throw new Error(`audit read ${files} files of ${sessions}`);
    const auditMs = median(samples.a);
    const floorMs = median(samples.b);
    return [
      throughputRow({
        id: 'startup-audit',
        name: `startup scan + audit of ${sessions.toLocaleString('en')} session journals (auditStore)`,
        unit: 'journals/s',
        value: sessions / (auditMs / 1000),
        floor: sessions / (floorMs / 1000),
        minRatio: 0.5,
        note: `${(stats.bytes / 1e6).toFixed(0)} MB, ${stats.turns} turns, ${planned} turns planned for recovery; audit ${round(auditMs, 3)} ms vs floor ${round(floorMs, 3)} ms (medians of ${iterations})`,
        details: { ...stats, iterations, planned, auditMs: samples.a, floorMs: samples.b },
      }),
    ];
  },
};
