import type { FigureRow } from './types.js';

function formatNumber(value: number | null): string {
  if (value === null) return '—';
  if (!Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  if (abs >= 1000) return Math.round(value).toLocaleString('en');
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  if (abs >= 1) return value.toFixed(2);
  return value.toPrecision(3);
}

/** The value or floor with its unit. */
export function withUnit(value: number | null, unit: string): string {
  return value === null ? '—' : `${formatNumber(value)} ${unit}`;
}

/** The text of the `met` column. */
export function metText(row: FigureRow): string {
  if (row.status === 'pending') return 'pending';
  if (row.met === null) return 'info';
  return row.met ? 'yes' : 'NO';
}

const HEADER = ['figure', 'value', 'floor / peer', 'ratio', 'target', 'met'] as const;

/** One row's cells, in the order of {@link HEADER}. */
function cells(row: FigureRow): string[] {
  return [
    row.name,
    row.status === 'pending' ? 'pending' : withUnit(row.value, row.unit),
    withUnit(row.floor, row.floorUnit ?? row.unit),
    row.ratio === null
      ? '—'
      : `${row.ratio.toFixed(row.ratio >= 100 ? 0 : 2)}${row.direction === 'lower' ? ' ↓' : ' ↑'}`,
    row.target,
    metText(row),
  ];
}

/** The results as a plain-text table with notes under it. */
export function renderTable(rows: readonly FigureRow[]): string {
  const header = HEADER.map((h) => (h === 'floor / peer' ? 'floor' : h));
  const body = rows.map(cells);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => (r[i] as string).length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] as number))
      .join('  ')
      .trimEnd();
  const out = [line(header), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)];
  out.push('', '↑ higher ratio is better, ↓ lower is better; ratios are defined per row in latest.json.');
  for (const row of rows) if (row.note) out.push(`- ${row.id}: ${row.note}`);
  return out.join('\n');
}

/**
 * The results as a Markdown table (the measured and pending rows, not the information ones unless `withInfo`), for
 * BENCHMARKS.md and the README: `pnpm bench:markdown [results.json]`. Cells are escaped for the table (`|`).
 */
export function renderMarkdownTable(rows: readonly FigureRow[], withInfo = false): string {
  // A verdict in bold, as the documents show it: `**yes**`, `**no**`; `info` and `pending` as they are.
  const verdict = (cell: string) => (cell === 'yes' ? '**yes**' : cell === 'NO' ? '**no**' : cell);
  const body = rows
    .filter((row) => withInfo || row.status !== 'info')
    .map(cells)
    .map((row) => [...row.slice(0, -1), verdict(row.at(-1) as string)]);
  const escapeCell = (cell: string) => cell.replaceAll('|', '\\|');
  const line = (row: readonly string[]) => `| ${row.map(escapeCell).join(' | ')} |`;
  return [line(HEADER), line(HEADER.map(() => '---')), ...body.map(line)].join('\n');
}
