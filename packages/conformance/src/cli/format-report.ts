import type { Finding, Report } from '@turnjournal/schema';
import { textLines } from './terminal-text.js';

/** Output formats of the report commands. */
export const REPORT_FORMATS = ['text', 'json', 'junit'] as const;
/** An output format of the report commands. */
export type ReportFormat = (typeof REPORT_FORMATS)[number];

/** Renders a report in the chosen format. */
export function formatReport(report: Report, format: ReportFormat, options: { timeline?: boolean } = {}): string {
  if (format === 'json') return `${JSON.stringify(report, null, 2)}\n`;
  if (format === 'junit') return junit(report);
  return text(report, options.timeline ?? false);
}

function text(report: Report, timeline: boolean): string {
  const { summary } = report;
  const f = summary.findings;
  const verdict = f.error > 0 ? 'FAILED' : report.clean ? 'clean' : 'passed with warnings';
  const lines = [
    `${report.command}: ${verdict}: ${summary.files} file(s), ${summary.records} record(s), ${summary.sessions} session(s), ${summary.turns} turn(s); findings: ${f.error} error, ${f.warn} warn, ${f.info} info`,
  ];
  const omitted = Object.entries(summary.omitted);
  if (omitted.length > 0)
    lines.push(`  (left out by the per-code cap: ${omitted.map(([c, n]) => `${n} ${c}`).join(', ')})`);
  for (const [file, findings] of groupByFile(report.findings)) {
    lines.push('', file);
    for (const finding of findings) {
      const where =
        finding.line !== undefined
          ? `line ${finding.line}`
          : finding.offset !== undefined
            ? `byte ${finding.offset}`
            : '';
      const turn = finding.turn_id !== undefined ? ` turn ${finding.turn_id}` : '';
      lines.push(
        `  ${finding.severity.padEnd(5)} ${finding.code}${where ? ` (${where})` : ''}${turn}: ${finding.message}`,
      );
    }
  }
  if (timeline) {
    for (const session of report.sessions) {
      lines.push('', `session ${session.session_id} (${session.files.length} file(s))`);
      for (const turn of session.turns) {
        const when =
          turn.submitted_at !== undefined ? new Date(turn.submitted_at * 1000).toISOString() : 'no submitted record';
        const reason = turn.reason !== undefined ? ` (${turn.reason})` : '';
        const content =
          turn.content_excerpt !== undefined
            ? ` ${JSON.stringify(turn.content_excerpt)}${turn.content_truncated ? '…' : ''}`
            : '';
        lines.push(`  ${turn.turn_id}  ${turn.state}${reason}  ${when}${content}`);
      }
    }
  }
  if (timeline) {
    for (const log of report.event_logs) {
      const active = log.active_request_id === null ? 'no active run' : `active run ${log.active_request_id}`;
      lines.push(
        '',
        `event log ${log.session_id ?? log.file}: ${log.messages} message(s), last seq ${log.last_seq ?? '-'}, ${active}, ${log.undelivered.length} undelivered (${log.file})`,
      );
    }
    for (const run of report.runs) {
      lines.push(
        '',
        `run ${run.run_id ?? '(no id)'} ${run.outcome}: ${run.llm_calls} model call(s), ${run.agent_events} agent event(s) (${run.file})`,
      );
    }
  }
  if (report.plan !== undefined) {
    lines.push(
      '',
      report.plan.length === 0
        ? 'recovery plan: nothing to recover'
        : `recovery plan: ${report.plan.length} abandoned turn(s)`,
    );
    for (const step of report.plan)
      lines.push(`  ${step.session_id} ${step.turn_id} (${step.state}): ${step.actions.join(' → ')}`);
  }
  return textLines(lines);
}

function groupByFile(findings: readonly Finding[]): Map<string, Finding[]> {
  const groups = new Map<string, Finding[]>();
  for (const finding of findings) {
    const key = finding.file ?? (finding.session_id !== undefined ? `session ${finding.session_id}` : '(store)');
    groups.set(key, [...(groups.get(key) ?? []), finding]);
  }
  return groups;
}

function junit(report: Report): string {
  // XML 1.0 cannot carry most control characters at all: they become U+FFFD, the rest is escaped.
  const xml = (s: string) =>
    s
      // biome-ignore lint/suspicious/noControlCharactersInRegex: XML 1.0 forbids these characters, so they are replaced.
      .replace(/[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd]/gu, '\ufffd')
      .replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
  const describe = (f: Finding) =>
    `${f.severity} ${f.code}${f.line !== undefined ? ` line ${f.line}` : f.offset !== undefined ? ` byte ${f.offset}` : ''}${f.turn_id === undefined ? '' : ` turn ${f.turn_id}`}: ${f.message}`;
  const byFile = groupByFile(report.findings);
  // One test case per file read, then one per group of findings that belongs to no file (a session, the store).
  const groups: [string, Finding[]][] = [
    ...report.files.map((file): [string, Finding[]] => [file.path, byFile.get(file.path) ?? []]),
    ...[...byFile].filter(([key]) => !report.files.some((file) => file.path === key)),
  ];
  const cases = groups.map(([name, findings]) => {
    const errors = findings.filter((f) => f.severity === 'error');
    // Warnings and infos do not fail a case, but a CI reader must still see them: they go to the case's output.
    const others = findings.filter((f) => f.severity !== 'error');
    const failure =
      errors.length === 0
        ? ''
        : `<failure message="${xml(`${errors.length} error finding(s)`)}">${xml(errors.map(describe).join('\n'))}</failure>`;
    const output = others.length === 0 ? '' : `<system-out>${xml(others.map(describe).join('\n'))}</system-out>`;
    return `    <testcase classname="turnjournal.${xml(report.command)}" name="${xml(name)}">${failure}${output}</testcase>`;
  });
  const failures = cases.filter((c) => c.includes('<failure')).length;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="turnjournal ${xml(report.command)}" tests="${cases.length}" failures="${failures}">`,
    `  <testsuite name="${xml(report.command)}" tests="${cases.length}" failures="${failures}">`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
