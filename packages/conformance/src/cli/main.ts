#!/usr/bin/env node
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { auditStore, buildReport, checkStore, RECOVERY_MODES, type RecoveryMode } from '@turnjournal/reader';
import { formatReport, REPORT_FORMATS, type ReportFormat } from './format-report.js';
import { type FileValidation, findRecordFiles, INFORMATIONAL_CODES, validateFile } from './validate-files.js';

/** Process exit codes of the `turnjournal` CLI. */
const EXIT = { clean: 0, violations: 1, usage: 2 } as const;

const USAGE = `Usage: turnjournal <command> [options] <path>...

Commands:
  check <path>...      Read files or whole stores against the v1 spec: framing, records, turn derivation.
                       Exit 0 when no finding has severity error, 1 otherwise, 2 on usage errors.
  inspect <path>...    The same, plus a readable timeline of every session's turns.
  audit <path>...      The check plus pending/interrupted turns, stale locks and the recovery plan.
                       Changes nothing.
  validate <path>...   Record-level check only: every line of *.jsonl / *.json files against the v1 schemas.

Options:
  --mode tolerant|prefix|strict   Recovery mode after damage (default: tolerant).
  --format text|json|junit        Output format (default: text; validate supports text and json).
  -h, --help                      Show this help.
`;

class UsageError extends Error {}

async function main(argv: readonly string[]): Promise<number> {
  try {
    return await run(argv);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`turnjournal: ${error.message}\n\n${USAGE}`);
      return EXIT.usage;
    }
    throw error;
  }
}

async function run(argv: readonly string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(USAGE);
    return EXIT.clean;
  }
  const [command, ...paths] = positionals;
  if (command === undefined) throw new UsageError('no command given');
  if (!['check', 'inspect', 'audit', 'validate'].includes(command))
    throw new UsageError(`unknown command "${command}"`);
  const format = (values.format ?? 'text') as ReportFormat;
  if (!REPORT_FORMATS.includes(format) || (command === 'validate' && format === 'junit')) {
    throw new UsageError(
      `--format must be one of ${command === 'validate' ? 'text, json' : REPORT_FORMATS.join(', ')}, got "${format}"`,
    );
  }
  const mode = (values.mode ?? 'tolerant') as RecoveryMode;
  if (!RECOVERY_MODES.includes(mode))
    throw new UsageError(`--mode must be one of ${RECOVERY_MODES.join(', ')}, got "${mode}"`);
  if (paths.length === 0) throw new UsageError(`${command}: no path given`);
  const missing = paths.filter((path) => !existsSync(path));
  if (missing.length > 0) throw new UsageError(`${command}: no such file or directory: ${missing.join(', ')}`);

  if (command === 'validate') {
    const results: FileValidation[] = [];
    for (const file of findRecordFiles(paths)) results.push(await validateFile(file));
    process.stdout.write(
      format === 'json' ? `${JSON.stringify({ files: results }, null, 2)}\n` : validateText(results),
    );
    return results.some((r) => r.problems.some((p) => !INFORMATIONAL_CODES.has(p.code))) ? EXIT.violations : EXIT.clean;
  }
  const report =
    command === 'audit'
      ? await auditStore(paths, { mode }).then((audit) =>
          buildReport(audit.check, { command, mode, paths, plan: audit.plan }),
        )
      : buildReport(await checkStore(paths, { mode }), { command, mode, paths });
  process.stdout.write(formatReport(report, format, { timeline: command === 'inspect' }));
  return report.summary.findings.error > 0 ? EXIT.violations : EXIT.clean;
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: { format: { type: 'string' }, mode: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
}

function validateText(results: readonly FileValidation[]): string {
  const records = results.reduce((n, r) => n + Object.values(r.counts).reduce((a, b) => a + b, 0), 0);
  const problems = results.reduce((n, r) => n + r.problems.length, 0);
  const lines = [`${results.length} file(s), ${records} record(s), ${problems} problem(s)`];
  for (const result of results) {
    const counts = Object.entries(result.counts)
      .map(([status, n]) => `${n} ${status}`)
      .join(', ');
    lines.push(`${result.path}: ${counts || 'no records'}`);
    for (const problem of result.problems) lines.push(`  line ${problem.line}: ${problem.code}: ${problem.message}`);
  }
  return `${lines.join('\n')}\n`;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`turnjournal: internal error: ${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = 3;
  },
);
