/**
 * Prints a results file as the Markdown table BENCHMARKS.md and the README show: `pnpm bench:markdown [file]`
 * (default `bench/results/latest.json`; `--info` keeps the information rows too). Format the document after pasting:
 * `npx biome format --write BENCHMARKS.md` aligns the table's columns.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderMarkdownTable } from './lib/table.js';
import type { FigureRow } from './lib/types.js';

const args = process.argv.slice(2).filter((arg) => arg !== '--');
const withInfo = args.includes('--info');
const unknown = args.filter((arg) => arg.startsWith('--') && arg !== '--info');
if (unknown.length > 0) {
  process.stderr.write(`usage: pnpm bench:markdown [results.json] [--info]\nunknown option ${unknown.join(', ')}\n`);
  process.exit(2);
}
const file =
  args.find((arg) => !arg.startsWith('--')) ?? join(dirname(fileURLToPath(import.meta.url)), 'results', 'latest.json');
let figures: FigureRow[];
try {
  figures = (JSON.parse(readFileSync(file, 'utf8')) as { figures: FigureRow[] }).figures;
  if (!Array.isArray(figures)) throw new Error('no "figures" array');
} catch (error) {
  process.stderr.write(`cannot read results from ${file}: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
process.stdout.write(`${renderMarkdownTable(figures, withInfo)}\n`);
