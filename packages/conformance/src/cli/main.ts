#!/usr/bin/env node
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { type FileValidation, findRecordFiles, INFORMATIONAL_CODES, validateFile } from './validate-files.js';

/** Process exit codes of the `turnjournal` CLI. */
const EXIT = { clean: 0, violations: 1, usage: 2 } as const;

const USAGE = `Usage: turnjournal <command> [options] <path>...

Commands:
  validate <path>...   Check every record of the given files or directories (*.jsonl, *.json) against the v1
                       schemas. Exit 0 when every record is accepted, 1 otherwise, 2 on usage errors.

Options:
  --format text|json   Output format (default: text).
  -h, --help           Show this help.
`;

function main(argv: readonly string[]): number {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    process.stderr.write(`turnjournal: ${(error as Error).message}\n\n${USAGE}`);
    return EXIT.usage;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(USAGE);
    return EXIT.clean;
  }
  const [command, ...paths] = positionals;
  if (command !== 'validate') {
    process.stderr.write(
      `turnjournal: ${command === undefined ? 'no command given' : `unknown command "${command}"`}\n\n${USAGE}`,
    );
    return EXIT.usage;
  }
  const format = values.format ?? 'text';
  if (format !== 'text' && format !== 'json') {
    process.stderr.write(`turnjournal: --format must be text or json, got "${format}"\n`);
    return EXIT.usage;
  }
  if (paths.length === 0) {
    process.stderr.write(`turnjournal validate: no path given\n\n${USAGE}`);
    return EXIT.usage;
  }
  const missing = paths.filter((path) => !existsSync(path));
  if (missing.length > 0) {
    process.stderr.write(`turnjournal validate: no such file or directory: ${missing.join(', ')}\n`);
    return EXIT.usage;
  }
  const results = findRecordFiles(paths).map(validateFile);
  process.stdout.write(format === 'json' ? `${JSON.stringify({ files: results }, null, 2)}\n` : textReport(results));
  return results.some((r) => r.problems.some((p) => !INFORMATIONAL_CODES.has(p.code))) ? EXIT.violations : EXIT.clean;
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: { format: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
}

function textReport(results: readonly FileValidation[]): string {
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

process.exitCode = main(process.argv.slice(2));
