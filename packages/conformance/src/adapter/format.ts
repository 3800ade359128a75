import { escapeControls } from '../cli/terminal-text.js';
import type { CheckReport, ConformanceReport } from './report.js';

/** Output formats of `turnjournal conformance`. */
export const CONFORMANCE_FORMATS = ['text', 'json', 'junit'] as const;
/** One output format. */
export type ConformanceFormat = (typeof CONFORMANCE_FORMATS)[number];

const MARK: Record<CheckReport['status'], string> = {
  passed: 'ok  ',
  failed: 'FAIL',
  warning: 'WARN',
  skipped: 'skip',
  expected_failure: 'xfail',
  stale_expected_failure: 'STALE',
};

/** Renders a conformance report. */
export function formatConformanceReport(report: ConformanceReport, format: ConformanceFormat): string {
  if (format === 'json') return `${JSON.stringify(report, null, 2)}\n`;
  if (format === 'junit') return junit(report);
  return text(report);
}

function text(report: ConformanceReport): string {
  const { adapter, summary } = report;
  const lines = [
    `adapter: ${adapter.name ?? '(no start)'} ${adapter.version ?? ''} (${adapter.language ?? '?'}) — ${adapter.command}`,
    `claims: levels ${adapter.levels.join(', ') || '-'}; families ${adapter.families.join(', ') || '-'}; durability ${adapter.durability.join(', ') || '-'}; features ${adapter.features.join(', ') || '-'}`,
    `seed ${report.options.seed}, ${report.options.runs} generated reader cases, ${report.options.writer_rounds} writer rounds${report.options.timeout_ms === undefined ? '' : `, ${report.options.timeout_ms} ms per request (time limits ×${report.options.timeout_scale ?? 1})`}`,
    '',
  ];
  for (const check of report.checks) {
    if (check.status === 'passed' || (check.status === 'skipped' && check.id.startsWith('reader/store/'))) continue;
    const mark = check.timed_out === true ? `${MARK[check.status]} (timed out)` : MARK[check.status];
    lines.push(`${mark} ${check.id} [${check.requirements.join(', ')}] ${check.title}`);
    // Details are multi-line on purpose; each of their lines is escaped on its own.
    for (const detail of check.details) for (const line of detail.split('\n')) lines.push(`       ${line}`);
  }
  // Only the requirements with something other than passes: a passing run would otherwise print one all-zero row per
  // requirement (about 140).
  const requirements = Object.entries(report.requirements).sort(([a], [b]) => a.localeCompare(b));
  const notAllPassed = requirements.filter(
    ([, c]) => c.failed + c.warning + c.skipped + c.expected_failure + c.stale_expected_failure > 0,
  );
  lines.push(
    '',
    `requirements: ${requirements.length} exercised, ${requirements.length - notAllPassed.length} with every check passed`,
  );
  lines.push(...situationLines(requirements));
  if (notAllPassed.length > 0) lines.push('requirement       passed failed warning skipped xfail stale situations');
  for (const [id, c] of notAllPassed)
    lines.push(
      `${id.padEnd(16)} ${[c.passed, c.failed, c.warning, c.skipped, c.expected_failure, c.stale_expected_failure, c.situations].map((n) => String(n).padStart(6)).join(' ')}`,
    );
  lines.push(
    '',
    `${report.checks.length} checks: ${summary.passed} passed, ${summary.failed} failed, ${summary.warning} warnings, ${summary.skipped} skipped, ${summary.expected_failure} expected failures, ${summary.stale_expected_failure} stale baseline entries`,
    verdict(report),
  );
  // Adapter names, check details and file names come from the adapter under test: never raw to the terminal.
  return `${lines.map(escapeControls).join('\n')}\n`;
}

/** The requirements named on the line of those a single situation exercised, before "and N more". */
const SINGLE_SITUATION_NAMED = 24;

/**
 * How hard the run tested each requirement, in two lines: how many requirements the checks citing them exercised in
 * one situation, a few, tens or hundreds (generated stores, kill and race rounds count one each), and which ones only
 * one situation exercised — the ones a defect most easily slips past.
 */
function situationLines(requirements: readonly [string, ConformanceReport['requirements'][string]][]): string[] {
  if (requirements.length === 0) return [];
  const bands = [
    { label: 'none (every check skipped)', from: 0, to: 0 },
    { label: '1', from: 1, to: 1 },
    { label: '2–9', from: 2, to: 9 },
    { label: '10–99', from: 10, to: 99 },
    { label: '100 or more', from: 100, to: Number.POSITIVE_INFINITY },
  ];
  const counted = bands
    .map((band) => ({
      ...band,
      ids: requirements.filter(([, c]) => c.situations >= band.from && c.situations <= band.to).length,
    }))
    .filter((band) => band.ids > 0)
    .map((band) => `${band.label}: ${band.ids}`);
  const single = requirements.filter(([, c]) => c.situations === 1).map(([id]) => id);
  const named = single.slice(0, SINGLE_SITUATION_NAMED).join(', ');
  const more = single.length > SINGLE_SITUATION_NAMED ? `, and ${single.length - SINGLE_SITUATION_NAMED} more` : '';
  return [
    `situations per requirement (JSON report: requirements.<id>.situations): ${counted.join(', ')}`,
    ...(single.length > 0 ? [`exercised by a single situation: ${named}${more}`] : []),
  ];
}

/** The last line: never CONFORMANT for a partial run, a run that proved less than it claims, or a baselined run. */
function verdict(report: ConformanceReport): string {
  if (report.conformant) return 'CONFORMANT for the claims above (no failure, no baseline entry, every check run)';
  if (!report.ok) return 'NOT CONFORMANT';
  const notes: string[] = [];
  if (report.partial)
    notes.push('partial run (--only or --tier left out claimed checks): not a conformance claim; run without them');
  if (report.not_proven.length > 0)
    notes.push(
      `NOT PROVEN: ${report.not_proven.join(', ')} skipped (see above; for strace: apt-get install strace) — exit status 4`,
    );
  // Otherwise what keeps the run from a claim is the baseline: it has entries.
  if (report.summary.expected_failure > 0 || notes.length === 0)
    notes.push(
      'PASSED with an expected-failures baseline: not a conformance claim until the baseline is empty (TJ-CONF-003)',
    );
  return notes.join('\n');
}

function xml(value: string): string {
  return (
    value
      // biome-ignore lint/suspicious/noControlCharactersInRegex: XML 1.0 forbids these characters, so they are replaced.
      .replace(/[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd]/gu, '\ufffd')
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
  );
}

function junit(report: ConformanceReport): string {
  const tiers = ['adapter', 'reader', 'writer'] as const;
  const out = ['<?xml version="1.0" encoding="UTF-8"?>'];
  const failures = report.summary.failed + report.summary.stale_expected_failure;
  out.push(
    `<testsuites name="turnjournal conformance" tests="${report.checks.length}" failures="${failures}" skipped="${report.summary.skipped}">`,
  );
  for (const tier of tiers) {
    const checks = report.checks.filter((c) => c.tier === tier);
    if (checks.length === 0) continue;
    const failed = checks.filter((c) => c.status === 'failed' || c.status === 'stale_expected_failure').length;
    const skipped = checks.filter((c) => c.status === 'skipped').length;
    const time = checks.reduce((t, c) => t + c.duration_ms, 0) / 1000;
    out.push(
      `  <testsuite name="${tier}" tests="${checks.length}" failures="${failed}" skipped="${skipped}" time="${time.toFixed(3)}">`,
    );
    for (const check of checks) {
      const name = `${check.id} [${check.requirements.join(', ')}]`;
      out.push(
        `    <testcase classname="turnjournal.${tier}" name="${xml(name)}" time="${(check.duration_ms / 1000).toFixed(3)}">`,
      );
      const body = xml(check.details.join('\n'));
      if (check.status === 'failed' || check.status === 'stale_expected_failure')
        out.push(`      <failure message="${xml(check.title)}">${body}</failure>`);
      else if (check.status === 'skipped') out.push(`      <skipped message="${body}"/>`);
      else if (check.status !== 'passed') out.push(`      <system-out>${xml(check.status)}: ${body}</system-out>`);
      out.push('    </testcase>');
    }
    out.push('  </testsuite>');
  }
  out.push('</testsuites>');
  return `${out.join('\n')}\n`;
}
