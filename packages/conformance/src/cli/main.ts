#!/usr/bin/env node
// First: V8 settings that must be in place before any file is read (see heap-tuning.ts).
import './heap-tuning.js';
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { RECOVERY_MODES, type RecoveryMode } from '@turnjournal/reader';
import {
  auditStoreListing,
  buildStreamedReportOf,
  checkStoreListing,
  diskContents,
  recordStoreContents,
  turnsOf,
} from '@turnjournal/reader/_internals';
import { WriterError } from '@turnjournal/writer';
import { ConformanceError } from '../errors.js';
import { REPORT_FORMATS, type ReportFormat, reportChunks } from './format-report.js';
import {
  compactCommand,
  compactionJson,
  formatCompaction,
  parseDuration,
  recoverCommand,
  recoveryComplete,
  recoveryTextChunks,
  streamedRecoveryJson,
} from './maintenance.js';
import { parseArgsMessage } from './parse-args-message.js';
import { jsonDocumentChunks } from './report-json-chunks.js';
import { type CommandTarget, isStoreUrl, openStoreUrl, openTarget, withoutPassword } from './store-target.js';
import { textLines } from './terminal-text.js';
import { formatTransfer, transferCommand } from './transfer.js';
import {
  type FileValidation,
  findRecordFiles,
  INFORMATIONAL_CODES,
  MAX_PROBLEMS_PER_CODE,
  ProblemBudget,
  validateFile,
} from './validate-files.js';

/** Process exit codes of the `turnjournal` CLI. */
const EXIT = { clean: 0, violations: 1, usage: 2, internal: 3 } as const;

/** The version of the package this CLI ships in. */
function version(): string {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return manifest.version;
}

const USAGE = `Usage: turnjournal <command> [options] <path>...

Commands:
  check <path>...      Read files or whole stores against the v1 spec: framing, records, turn derivation.
                       Exit 0 when no finding has severity error, 1 otherwise, 2 on usage errors.
  inspect <path>...    The same, plus a readable timeline of every session's turns.
  audit <path>...      The check plus pending/interrupted turns, stale locks and the recovery plan.
                       Changes nothing.
  validate <path>...   Record-level check only: every line of *.jsonl / *.json files against the v1 schemas.
  recover <path>...    Startup recovery: print the plan for abandoned turns (default), or perform it with --apply
                       (needs --hooks <module> to update your host transcript, or --journal-only).
                       --apply exits 1 when a live writer still holds part of the store (run it again later).
  compact <path>...    Retention sweep of every turn journal directory under the paths (removes terminal,
                       delivered turns older than the window from sessions whose audit is clean), then
                       compaction of every event log (drops the records before a checkpoint that nothing needs).
  conformance --adapter "<command>"
                       Black-box conformance run of an implementation through its adapter (spec/v1/adapter.md):
                       the reader tier (store fixtures + generated cases) and the writer tier (kill rounds, ack
                       oracle, lock, torn tail, fsync before ack under strace). Exit 0 all pass, 1 failures, 2 usage,
                       4 not proven: a check a claimed level needs was skipped (no strace: apt-get install strace).
                       --only and partial --tier runs say "partial run" and are never CONFORMANT.
  adapter              The reference adapter: speaks the adapter protocol on stdin/stdout, backed by
                       @turnjournal/reader and @turnjournal/writer.

  export <url> <dir>   Copy every journal and document of a store into a new directory, byte for byte.
  import <dir> <url>   Copy a directory's store into a database store that holds none of its journals.
  pg migrate <url>     Create or upgrade the turnjournal tables of a PostgreSQL database (idempotent).

Targets: check, inspect, audit, recover and compact take paths, or one record store by its URL instead:
  postgres://user@host/db?store=<name>   a PostgreSQL store (needs @turnjournal/postgres installed beside the
                                          CLI; the tables must exist). Reports never print the URL's password.

Options:
  --mode tolerant|prefix|strict   Recovery mode after damage (default: tolerant).
  --format text|json|junit        Output format (default: text; validate, recover and compact: text or json).
                                  JSON follows spec/v1/<command>.schema.json (check, inspect, audit:
                                  report.schema.json; conformance: conformance-report.schema.json).
  --apply                         recover: perform the plan (default: print it).
  --hooks <module.mjs>            recover --apply: ES module exporting ensureUserMessage and
                                  ensureInterruptionMarker(turn), both idempotent and keyed by turn id.
  --journal-only                  recover --apply: the store has no host transcript; only close the journals.
  --retention <duration>          compact: retention window, e.g. 48h (default), 30m, 2d, 3600.
  --dry-run                       compact: report what would be pruned, change nothing.
  --adapter "<command>"           conformance: the adapter command, run with sh -c.
  --tier reader|writer|all        conformance: tiers to run (default: all the adapter claims).
  --runs <n>                      conformance: generated reader cases and writer rounds (default 100 and 20).
  --seed <n>                      conformance: seed of generated cases and kill points (default 20260511).
  --expected-failures <file>      conformance: baseline {"failures":[{"check","reason"}]}; a listed failing check
                                  does not fail the run, a listed passing check does (stale entry).
  --report <file>                 conformance: also write the JSON report to <file>.
  --timeout <ms>                  conformance: per-request timeout (default 30000).
  --timeout-scale <x>             conformance: multiply every time limit (the per-request timeout and the
                                  checks' hang guards) by x, e.g. 3 on a slow or loaded machine (default: the
                                  TURNJOURNAL_TIMEOUT_SCALE environment variable, else 1). A check that timed
                                  out says so; a hang fails at any scale.
  --only <prefix>[,<prefix>…]     conformance: run only the checks whose id starts with a prefix,
                                  e.g. reader/store/framing.json or writer/ (adapter/start always runs).
  --store-lines[=<url>]           adapter: a writer on a record store kept apart from the paths it is given,
                                  read back through the op \`lines\` (feature store-lines, adapter.md §5.8): a
                                  file store under <root>/.store-lines, or with =postgres://… a PostgreSQL
                                  database (one store per harness root; needs @turnjournal/postgres).
  -h, --help                      Show this help.
  -v, --version                   Print the version.

Exit codes: 0 success (no error finding), 1 error findings or failed checks, 2 usage error, 3 internal error.
A closed standard output (e.g. \`turnjournal audit … | head -1\`) ends the command quietly with its own exit code.
`;

/** A mistake in the command line: exit status 2, with a pointer to --help. */
function usage(message: string): ConformanceError {
  return new ConformanceError('usage', message);
}

async function main(argv: readonly string[]): Promise<number> {
  try {
    return await run(argv);
  } catch (error) {
    if (!(error instanceof ConformanceError)) throw error;
    if (error.code === 'usage') {
      process.stderr.write(textLines([`turnjournal: ${error.message} (see turnjournal --help)`]));
      return EXIT.usage;
    }
    process.stderr.write(textLines([`turnjournal: ${error.message}`]));
    return error.code === 'refused' ? EXIT.violations : EXIT.internal;
  }
}

async function run(argv: readonly string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    throw usage(parseArgsMessage(error));
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(USAGE);
    return EXIT.clean;
  }
  if (values.version) {
    process.stdout.write(`turnjournal ${version()}\n`);
    return EXIT.clean;
  }
  const [command, ...paths] = positionals;
  if (command === undefined) throw usage('no command given');
  if (command === 'conformance' || command === 'adapter') return await protocolCommand(command, parsed);
  if (command === 'export' || command === 'import' || command === 'pg') return await storeCommand(command, parsed);
  if (!['check', 'inspect', 'audit', 'validate', 'recover', 'compact'].includes(command))
    throw usage(`unknown command "${command}"`);
  const format = (values.format ?? 'text') as ReportFormat;
  const textOrJson = ['validate', 'recover', 'compact'].includes(command);
  if (!REPORT_FORMATS.includes(format) || (textOrJson && format === 'junit')) {
    throw usage(`--format must be one of ${textOrJson ? 'text, json' : REPORT_FORMATS.join(', ')}, got "${format}"`);
  }
  const misplaced = Object.entries(OPTION_COMMANDS).filter(
    ([option, commands]) => values[option as keyof typeof values] !== undefined && !commands.includes(command),
  );
  if (misplaced.length > 0)
    throw usage(`--${misplaced.map(([option]) => option).join(', --')} cannot be used with ${command}`);
  const mode = (values.mode ?? 'tolerant') as RecoveryMode;
  if (!RECOVERY_MODES.includes(mode)) throw usage(`--mode must be one of ${RECOVERY_MODES.join(', ')}, got "${mode}"`);
  if (paths.length === 0) throw usage(`${command}: no path given`);
  if (command === 'validate' && paths.some(isStoreUrl))
    throw usage('validate: reads files; check a store with `turnjournal check <store URL>`');
  const missing = paths.filter((path) => !isStoreUrl(path) && !existsSync(path));
  if (missing.length > 0) throw usage(`${command}: no such file or directory: ${missing.join(', ')}`);
  if (command === 'validate') return await validateCommand(paths, format);
  const target = await maintenance(() => openTarget(command, paths));
  try {
    return await maintenance(() => targetCommand(command, target, values, format, mode));
  } finally {
    if (target.kind === 'store') await target.close();
  }
}

/** check, inspect, audit, recover and compact, on files under paths or on a record store. */
async function targetCommand(
  command: string,
  target: CommandTarget,
  values: ReturnType<typeof parse>['values'],
  format: ReportFormat,
  mode: RecoveryMode,
): Promise<number> {
  const source = target.kind === 'paths' ? target.paths : target.store;
  const paths = target.kind === 'paths' ? target.paths : [target.shown];

  if (command === 'recover') {
    const apply = values.apply === true;
    const result = await maintenance(() =>
      recoverCommand(source, { apply, hooks: values.hooks, journalOnly: values['journal-only'] === true }),
    );
    // Pieces, not one string: the plan holds each abandoned turn's whole submitted record (up to the line limit).
    await writeOut(
      format === 'json'
        ? jsonDocumentChunks(streamedRecoveryJson(result, apply), RECOVER_PIECE_DEPTH)
        : recoveryTextChunks(result, apply),
    );
    return apply && !recoveryComplete(result) ? EXIT.violations : EXIT.clean;
  }
  if (command === 'compact') {
    const retentionSeconds =
      values.retention === undefined
        ? undefined
        : await maintenance(async () => parseDuration(values.retention as string));
    const result = await maintenance(() =>
      compactCommand(source, {
        dryRun: values['dry-run'] === true,
        ...(retentionSeconds === undefined ? {} : { retentionSeconds }),
      }),
    );
    process.stdout.write(
      format === 'json'
        ? `${JSON.stringify(compactionJson(result, values['dry-run'] === true), null, 2)}\n`
        : formatCompaction(result),
    );
    return EXIT.clean;
  }
  // The turns are listed, not kept as objects: each is made when the audit, the plan or the report reaches it (issue
  // 11: an object per turn made a store of millions of orphan records cost its size again in memory).
  const contents = target.kind === 'paths' ? diskContents(target.paths) : recordStoreContents(target.store);
  const report =
    command === 'audit'
      ? await auditStoreListing(contents, { mode }, true).then((audit) =>
          buildStreamedReportOf(audit.check, { command, mode, paths, plan: audit.plan }, turnsOf),
        )
      : buildStreamedReportOf(
          // Only JSON and the timeline of `inspect` print turns: the other reports need their number alone.
          await checkStoreListing(contents, { mode, keepTurns: command === 'inspect' || format === 'json' }, true),
          { command, mode, paths },
          turnsOf,
        );
  await writeOut(reportChunks(report, format, { timeline: command === 'inspect' }));
  return report.summary.findings.error > 0 ? EXIT.violations : EXIT.clean;
}

/** `validate`: every line of the record files under the paths against the v1 schemas. */
async function validateCommand(paths: readonly string[], format: ReportFormat): Promise<number> {
  const results: FileValidation[] = [];
  const budget = new ProblemBudget();
  for (const file of findRecordFiles(paths)) results.push(await validateFile(file, budget));
  const omitted = omittedOf(results);
  process.stdout.write(
    format === 'json' ? `${JSON.stringify({ files: results, omitted }, null, 2)}\n` : validateText(results, omitted),
  );
  // A problem left out by the cap fails the run as a listed one does.
  const failing = (code: string) => !INFORMATIONAL_CODES.has(code);
  return results.some((r) => r.problems.some((p) => failing(p.code))) || Object.keys(omitted).some(failing)
    ? EXIT.violations
    : EXIT.clean;
}

/**
 * `export`, `import` and `pg migrate`: commands between a database and files, or on the database alone. They take no
 * option but the text output's.
 */
async function storeCommand(command: 'export' | 'import' | 'pg', parsed: ReturnType<typeof parse>): Promise<number> {
  const { values, positionals } = parsed;
  const options = Object.keys(values).filter((option) => option !== 'help' && option !== 'version');
  if (options.length > 0) throw usage(`--${options.join(', --')} cannot be used with ${command}`);
  const targets = positionals.slice(1);
  if (command === 'pg') {
    if (targets[0] !== 'migrate' || targets.length !== 2)
      throw usage('pg: the one subcommand is `turnjournal pg migrate <postgres URL>`');
    const migrated = await maintenance(() => migrateCommand(targets[1] as string));
    process.stdout.write(textLines([migrated]));
    return EXIT.clean;
  }
  const result = await maintenance(() => transferCommand(command, targets));
  process.stdout.write(formatTransfer(command, result));
  return EXIT.clean;
}

/** `turnjournal pg migrate <url>`: creates or upgrades the tables of every store of the database (idempotent). */
async function migrateCommand(url: string): Promise<string> {
  if (!isStoreUrl(url)) throw usage(`pg migrate: ${url} is not a postgres:// URL`);
  // The tables are the database's, shared by every store in it: a URL without `store=` names none, and needs none.
  const { store, schemaVersion } = await openStoreUrl('pg migrate', url, 'migrate');
  try {
    await store.setup();
  } finally {
    await store.close();
  }
  return `the turnjournal tables of ${withoutPassword(url)} are at schema version ${schemaVersion}`;
}

/** `conformance` and `adapter`: their own options only, no paths. */
async function protocolCommand(command: 'conformance' | 'adapter', parsed: ReturnType<typeof parse>): Promise<number> {
  const { values, positionals } = parsed;
  if (positionals.length > 1) throw usage(`${command}: unexpected argument "${positionals[1]}"`);
  const allowed = command === 'conformance' ? CONFORMANCE_OPTIONS : ['store-lines'];
  const misplaced = Object.keys(values).filter(
    (option) => !allowed.includes(option) && option !== 'help' && option !== 'version',
  );
  if (misplaced.length > 0) throw usage(`--${misplaced.join(', --')} cannot be used with ${command}`);
  // Loaded on demand, so that the other commands do not pay for the adapter machinery at startup.
  const { adapterCommand, conformanceCommand } = await import('../adapter/cli.js');
  if (command === 'adapter') {
    const storeLines = values['store-lines'];
    return adapterCommand(storeLines === undefined ? false : storeLines === '' ? true : storeLines);
  }
  return await conformanceCommand(values);
}

const CONFORMANCE_OPTIONS = [
  'adapter',
  'tier',
  'runs',
  'seed',
  'format',
  'expected-failures',
  'report',
  'timeout',
  'timeout-scale',
  'only',
];

/** Options that belong to some commands only. */
const OPTION_COMMANDS: Readonly<Record<string, readonly string[]>> = {
  adapter: ['conformance'],
  tier: ['conformance'],
  runs: ['conformance'],
  seed: ['conformance'],
  'expected-failures': ['conformance'],
  report: ['conformance'],
  timeout: ['conformance'],
  'timeout-scale': ['conformance'],
  only: ['conformance'],
  'store-lines': ['adapter'],
  mode: ['check', 'inspect', 'audit'],
  apply: ['recover'],
  hooks: ['recover'],
  'journal-only': ['recover'],
  retention: ['compact'],
  'dry-run': ['compact'],
};

/**
 * The arguments as parseArgs takes them: `--store-lines` is a flag or `--store-lines=<url>`, and parseArgs has no
 * option of an optional value, so the bare flag becomes `--store-lines=` (an empty value). Arguments after `--` are
 * positionals and stay as they are.
 */
function withOptionalValues(argv: readonly string[]): string[] {
  const end = argv.indexOf('--');
  return argv.map((arg, i) => (arg === '--store-lines' && (end === -1 || i < end) ? '--store-lines=' : arg));
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: withOptionalValues(argv),
    allowPositionals: true,
    options: {
      format: { type: 'string' },
      mode: { type: 'string' },
      apply: { type: 'boolean' },
      hooks: { type: 'string' },
      'journal-only': { type: 'boolean' },
      retention: { type: 'string' },
      'dry-run': { type: 'boolean' },
      adapter: { type: 'string' },
      tier: { type: 'string' },
      runs: { type: 'string' },
      seed: { type: 'string' },
      'expected-failures': { type: 'string' },
      report: { type: 'string' },
      timeout: { type: 'string' },
      'timeout-scale': { type: 'string' },
      only: { type: 'string' },
      'store-lines': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'v' },
    },
  });
}

/**
 * Runs a maintenance command: a writer refusal (a live writer holds a lock, an invalid option) becomes a one-line error
 * with exit 1 instead of a stack trace.
 */
async function maintenance<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (error instanceof WriterError) throw new ConformanceError('refused', error.message, { cause: error });
    // PostgreSQL's undefined_table: the database was never set up for turnjournal.
    if ((error as { code?: unknown } | undefined)?.code === '42P01')
      throw new ConformanceError(
        'refused',
        `the database has no turnjournal tables (${(error as Error).message}): run \`turnjournal pg migrate <url>\` first`,
        { cause: error },
      );
    throw error;
  }
}

/** The problems the caps left out over every file, per code. */
function omittedOf(results: readonly FileValidation[]): Record<string, number> {
  const omitted: Record<string, number> = {};
  for (const result of results)
    for (const [code, n] of Object.entries(result.omitted)) omitted[code] = (omitted[code] ?? 0) + n;
  return omitted;
}

function validateText(results: readonly FileValidation[], omitted: Readonly<Record<string, number>>): string {
  const records = results.reduce((n, r) => n + Object.values(r.counts).reduce((a, b) => a + b, 0), 0);
  const listed = results.reduce((n, r) => n + r.problems.length, 0);
  const left = Object.values(omitted).reduce((a, b) => a + b, 0);
  const lines = [
    `${results.length} file(s), ${records} record(s), ${listed + left} problem(s)` +
      (left === 0 ? '' : ` (${left} not listed: ${MAX_PROBLEMS_PER_CODE} at most per code and file)`),
  ];
  for (const result of results) {
    const counts = Object.entries(result.counts)
      .map(([status, n]) => `${n} ${status}`)
      .join(', ');
    lines.push(`${result.path}: ${counts || 'no records'}`);
    for (const problem of result.problems) lines.push(`  line ${problem.line}: ${problem.code}: ${problem.message}`);
    for (const [code, n] of Object.entries(result.omitted)) lines.push(`  … ${n} more ${code} omitted`);
  }
  return textLines(lines);
}

/** `recover --format json` is written one planned turn at a time: the document, its lists, their elements. */
const RECOVER_PIECE_DEPTH = 3;

/** How much output is gathered before a write: pieces can be a few bytes, and each write to a file is a system call. */
const WRITE_BYTES = 64 * 1024;

/**
 * Writes the pieces of a report to stdout, gathered into writes of about 64 KiB, waiting whenever its buffer is full, so
 * that a large report is never one string. Stops early when stdout has gone away (see below).
 */
async function writeOut(chunks: Iterable<string>): Promise<void> {
  const out = process.stdout;
  const write = async (text: string) => {
    if (out.destroyed || out.write(text)) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        out.off('drain', done);
        out.off('close', done);
        out.off('error', done);
        resolve();
      };
      out.on('drain', done);
      out.on('close', done);
      out.on('error', done);
    });
  };
  let pending: string[] = [];
  let length = 0;
  for (const chunk of chunks) {
    pending.push(chunk);
    length += chunk.length;
    if (length < WRITE_BYTES) continue;
    await write(pending.join(''));
    if (out.destroyed) return;
    pending = [];
    length = 0;
  }
  if (length > 0) await write(pending.join(''));
}

// A reader that goes away (`turnjournal audit … | head -1`) is not an error: the rest of the output is dropped and the
// command ends with the exit code of its result. Other stdout failures are internal errors, on one line.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') return;
  process.stderr.write(`turnjournal: internal error: cannot write the output: ${error.message}\n`);
  process.exit(EXIT.internal);
});

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`turnjournal: internal error: ${(error as Error).stack ?? String(error)}\n`);
    process.exitCode = EXIT.internal;
  },
);
