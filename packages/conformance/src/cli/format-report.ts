import type { StreamedReport } from '@turnjournal/reader';
import type { Finding } from '@turnjournal/schema';
import { reportJsonChunks } from './report-json-chunks.js';
import { textLine } from './terminal-text.js';

/** Output formats of the report commands. */
export const REPORT_FORMATS = ['text', 'json', 'junit'] as const;
/** An output format of the report commands. */
export type ReportFormat = (typeof REPORT_FORMATS)[number];

/**
 * Renders a report in the chosen format, in pieces to be written one after the other: a store of a million turns is
 * printed without its whole report, or its whole text, in memory at once (issue 11).
 */
export function reportChunks(
  report: StreamedReport,
  format: ReportFormat,
  options: { timeline?: boolean } = {},
): Iterable<string> {
  if (format === 'json') return reportJsonChunks(report);
  if (format === 'junit') return junit(report);
  return text(report, options.timeline ?? false);
}

function* text(report: StreamedReport, timeline: boolean): Generator<string> {
  const { summary } = report;
  const f = summary.findings;
  const verdict = f.error > 0 ? 'FAILED' : report.clean ? 'clean' : 'passed with warnings';
  yield textLine(
    `${report.command}: ${verdict}: ${summary.files} file(s), ${summary.records} record(s), ${summary.sessions} session(s), ${summary.turns} turn(s); findings: ${f.error} error, ${f.warn} warn, ${f.info} info`,
  );
  const omitted = Object.entries(summary.omitted);
  if (omitted.length > 0)
    yield textLine(`  (left out by the per-code cap: ${omitted.map(([c, n]) => `${n} ${c}`).join(', ')})`);
  for (const [file, findings] of groupByFile(report.findings)) {
    yield textLine('');
    yield textLine(file);
    for (const finding of findings) {
      const where =
        finding.line !== undefined
          ? `line ${finding.line}`
          : finding.offset !== undefined
            ? `byte ${finding.offset}`
            : '';
      const turn = finding.turn_id !== undefined ? ` turn ${finding.turn_id}` : '';
      yield textLine(
        `  ${finding.severity.padEnd(5)} ${finding.code}${where ? ` (${where})` : ''}${turn}: ${finding.message}`,
      );
    }
  }
  if (timeline) {
    for (const session of report.sessions) {
      yield textLine('');
      yield textLine(`session ${session.session_id} (${session.files.length} file(s))`);
      for (const turn of session.turns) {
        const when =
          turn.submitted_at !== undefined ? new Date(turn.submitted_at * 1000).toISOString() : 'no submitted record';
        const reason = turn.reason !== undefined ? ` (${turn.reason})` : '';
        const content =
          turn.content_excerpt !== undefined
            ? ` ${JSON.stringify(turn.content_excerpt)}${turn.content_truncated ? '…' : ''}`
            : '';
        yield textLine(`  ${turn.turn_id}  ${turn.state}${reason}  ${when}${content}`);
      }
    }
    for (const log of report.event_logs) {
      const active = log.active_request_id === null ? 'no active run' : `active run ${log.active_request_id}`;
      yield textLine('');
      yield textLine(
        `event log ${log.session_id ?? log.file}: ${log.messages} message(s), last seq ${log.last_seq ?? '-'}, ${active}, ${log.undelivered.length} undelivered (${log.file})`,
      );
    }
    for (const run of report.runs) {
      yield textLine('');
      yield textLine(
        `run ${run.run_id ?? '(no id)'} ${run.outcome}: ${run.llm_calls} model call(s), ${run.agent_events} agent event(s) (${run.file})`,
      );
    }
  }
  if (report.plan !== undefined) {
    yield textLine('');
    yield textLine(
      report.plan.length === 0
        ? 'recovery plan: nothing to recover'
        : `recovery plan: ${report.plan.length} abandoned turn(s)`,
    );
    for (const step of report.plan)
      yield textLine(`  ${step.session_id} ${step.turn_id} (${step.state}): ${step.actions.join(' → ')}`);
  }
}

function groupByFile(findings: readonly Finding[]): Map<string, Finding[]> {
  const groups = new Map<string, Finding[]>();
  for (const finding of findings) {
    const key = finding.file ?? (finding.session_id !== undefined ? `session ${finding.session_id}` : '(store)');
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [finding]);
    else group.push(finding);
  }
  return groups;
}

// XML 1.0 cannot carry most control characters at all: they become U+FFFD, the rest is escaped.
const xml = (s: string) =>
  s
    // biome-ignore lint/suspicious/noControlCharactersInRegex: XML 1.0 forbids these characters, so they are replaced.
    .replace(/[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd]/gu, '\ufffd')
    .replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

const describe = (f: Finding) =>
  `${f.severity} ${f.code}${f.line !== undefined ? ` line ${f.line}` : f.offset !== undefined ? ` byte ${f.offset}` : ''}${f.turn_id === undefined ? '' : ` turn ${f.turn_id}`}: ${f.message}`;

function* junit(report: StreamedReport): Generator<string> {
  const byFile = groupByFile(report.findings);
  // One test case per file read, then one per group of findings that belongs to no file (a session, the store). The
  // totals come first in the XML, so a first pass counts them; the second writes the cases.
  const read = new Set<string>();
  for (const file of report.files) read.add(file.path);
  const others = [...byFile.keys()].filter((key) => !read.has(key));
  const hasError = (findings: readonly Finding[] | undefined) => findings?.some((f) => f.severity === 'error') === true;
  let failures = others.filter((key) => hasError(byFile.get(key))).length;
  for (const path of read) if (hasError(byFile.get(path))) failures += 1;
  const tests = read.size + others.length;
  const command = xml(report.command);
  yield '<?xml version="1.0" encoding="UTF-8"?>\n';
  yield `<testsuites name="turnjournal ${command}" tests="${tests}" failures="${failures}">\n`;
  yield `  <testsuite name="${command}" tests="${tests}" failures="${failures}">\n`;
  for (const name of [...read, ...others]) {
    const findings = byFile.get(name) ?? [];
    const errors = findings.filter((f) => f.severity === 'error');
    // Warnings and infos do not fail a case, but a CI reader must still see them: they go to the case's output.
    const rest = findings.filter((f) => f.severity !== 'error');
    const failure =
      errors.length === 0
        ? ''
        : `<failure message="${xml(`${errors.length} error finding(s)`)}">${xml(errors.map(describe).join('\n'))}</failure>`;
    const output = rest.length === 0 ? '' : `<system-out>${xml(rest.map(describe).join('\n'))}</system-out>`;
    yield `    <testcase classname="turnjournal.${command}" name="${xml(name)}">${failure}${output}</testcase>\n`;
  }
  yield '  </testsuite>\n';
  yield '</testsuites>\n';
}
