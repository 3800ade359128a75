import { statSync } from 'node:fs';
import { join } from 'node:path';
import { writeTurnJournal } from '../generate/turn-journal.js';
import { runChild } from '../lib/child.js';
import { round } from '../lib/stats.js';
import type { Figure, FigureRow } from '../lib/types.js';

const MiB = 1024 * 1024;

interface ChildResult {
  readonly what: string;
  readonly maxRssBytes: number;
  readonly ms: number;
  readonly records: number;
  readonly findings: number;
  readonly turns?: number;
}

/**
 * Peak RSS of a whole process reading a large turn journal, each in its own child process (plain `node`, no flags):
 * streaming `readJournal` (target ≤ 100 MB), `checkStore` over the same file (information: it keeps a summary per
 * turn), `checkStore` with `keepTurns: false` (findings and counts only, what `turnjournal check` runs: target
 * ≤ 150 MiB), the raw streaming floor (split + JSON.parse, keeping nothing) and a process that only loads the reader.
 */
export const peakMemory: Figure = {
  id: 'peak-memory',
  title: 'peak RSS reading a large turn journal',
  async run(context): Promise<FigureRow[]> {
    const targetBytes = context.mode === 'quick' ? 100 * MiB : 1024 * MiB;
    const file = join(context.workDir, '_turn_journal', 'conv-bench0002.jsonl');
    const generated = writeTurnJournal(file, { sessionId: 'conv-bench0002', seed: 2, targetBytes });
    const bytes = statSync(file).size;
    const size = context.mode === 'quick' ? `${Math.round(bytes / MiB)} MiB (quick mode; full run: 1 GiB)` : '1 GiB';
    context.log(`  turn journal: ${(bytes / MiB).toFixed(0)} MiB, ${generated.turns} turns`);
    const measure = async (what: string) => {
      const result = await runChild<ChildResult>(context.root, 'read-rss.mjs', [what, file]);
      context.log(
        `  ${what}: ${(result.maxRssBytes / MiB).toFixed(1)} MiB peak RSS, ${(result.ms / 1000).toFixed(1)} s`,
      );
      return result;
    };
    const baseline = await measure('baseline');
    const floor = await measure('floor');
    const read = await measure('readJournal');
    const check = await measure('checkStore');
    const count = await measure('checkStoreCount');
    if (read.records !== generated.lines) throw new Error(`readJournal read ${read.records} of ${generated.lines}`);
    const mb = (n: number) => round(n / MiB, 4);
    const common = {
      fileBytes: bytes,
      turns: generated.turns,
      lines: generated.lines,
      baselineRssMiB: mb(baseline.maxRssBytes),
    };
    return [
      {
        id: 'peak-rss-read-journal',
        name: `peak RSS, readJournal over ${size}`,
        value: mb(read.maxRssBytes),
        unit: 'MiB',
        floor: mb(floor.maxRssBytes),
        ratioDefinition: 'value / floor (RSS; the target is on the value)',
        ratio: round(read.maxRssBytes / floor.maxRssBytes, 3),
        direction: 'lower',
        target: 'value <= 100 MB (95.4 MiB)',
        met: read.maxRssBytes <= 100e6,
        status: 'measured',
        note: `child process, maxRSS; floor: streaming split + JSON.parse; node + reader loaded: ${mb(baseline.maxRssBytes)} MiB`,
        details: { ...common, ms: read.ms, records: read.records },
      },
      {
        id: 'peak-rss-check-store',
        name: `peak RSS, checkStore over ${size}`,
        value: mb(check.maxRssBytes),
        unit: 'MiB',
        floor: mb(floor.maxRssBytes),
        ratioDefinition: 'value / floor (RSS)',
        ratio: round(check.maxRssBytes / floor.maxRssBytes, 3),
        direction: 'lower',
        target: 'none',
        met: null,
        status: 'info',
        note: `checkStore keeps per turn a summary of each representative record; ${((check.maxRssBytes - baseline.maxRssBytes) / generated.turns).toFixed(0)} B per turn over the baseline`,
        details: { ...common, ms: check.ms, records: check.records, turns: check.turns },
      },
      {
        id: 'peak-rss-check-store-count',
        name: `peak RSS, checkStore with keepTurns: false over ${size}`,
        value: mb(count.maxRssBytes),
        unit: 'MiB',
        floor: mb(floor.maxRssBytes),
        ratioDefinition: 'value / floor (RSS; the target is on the value)',
        ratio: round(count.maxRssBytes / floor.maxRssBytes, 3),
        direction: 'lower',
        target: 'value <= 150 MiB (issue 14)',
        met: count.maxRssBytes <= 150 * MiB,
        status: 'measured',
        note: `the check of \`turnjournal check\`'s text and junit reports: findings and turn counts, no turn kept; ${((count.maxRssBytes - baseline.maxRssBytes) / generated.turns).toFixed(0)} B per turn over the baseline`,
        details: { ...common, ms: count.ms, records: count.records, turns: count.turns },
      },
    ];
  },
};
