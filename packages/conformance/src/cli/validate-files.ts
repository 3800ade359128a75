import { type Dirent, readdirSync, type Stats, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { readJournal, readStateDocument } from '@turnjournal/reader';
import type { Finding, RecordError } from '@turnjournal/schema';

/**
 * Record-level validation of files, the work behind `turnjournal validate`: every committed line of a `.jsonl` file
 * (or a whole `.json` state document) against the v1 schemas. It reads through `@turnjournal/reader` without salvage,
 * so each damaged line is reported as it is; family, derivation and audit are `turnjournal check`'s work.
 */

/** One problem found in a file, with its line (1-based; 0 for the file itself). */
export interface FileProblem {
  /**
   * `invalid_record`, `malformed_line`, `unsupported_version`, `unreadable_file`, `special_file`, or the informational
   * `torn_tail`, `blank_line` and `writer_violation_*`.
   */
  readonly code: string;
  /** 1-based line number; 0 when the problem concerns the whole file. */
  readonly line: number;
  /** Readable explanation, with what was expected and what arrived. */
  readonly message: string;
  /** Schema errors when the record broke its schema. */
  readonly errors?: readonly RecordError[];
}

/** What `validate` found in one file. */
export interface FileValidation {
  /** The file's path as given or discovered. */
  readonly path: string;
  /** Number of records per verdict (`valid`, `unknown`, `extension`, `invalid`, `unsupported_version`). */
  readonly counts: Readonly<Record<string, number>>;
  /** Problems, in file order: at most {@link MAX_PROBLEMS_PER_CODE} per code (see `omitted`). */
  readonly problems: readonly FileProblem[];
  /** Problems left out of `problems` by the caps, per code (spec TJ-AUDIT-013, TJ-AUDIT-016); `{}` when none was. */
  readonly omitted: Readonly<Record<string, number>>;
}

/**
 * Problems listed per code and file, as `check` caps its findings (spec TJ-AUDIT-013): a file of two million blank
 * lines has two million problems, and listing them all took memory in proportion to the file.
 */
export const MAX_PROBLEMS_PER_CODE = 1000;

/** Problems listed per code over all the files of one run (spec TJ-AUDIT-016), as `check` caps a store. */
export const MAX_RUN_PROBLEMS_PER_CODE = 10_000;

/** What one run of `validate` may still list, per code, over all its files (see {@link MAX_RUN_PROBLEMS_PER_CODE}). */
export class ProblemBudget {
  readonly #listed = new Map<string, number>();
  readonly #max: number;

  /** @param maxPerCode problems listed per code over the run. */
  constructor(maxPerCode: number = MAX_RUN_PROBLEMS_PER_CODE) {
    this.#max = maxPerCode;
  }

  /** True, and counted, when one more problem of `code` may be listed. */
  take(code: string): boolean {
    const listed = this.#listed.get(code) ?? 0;
    if (listed >= this.#max) return false;
    this.#listed.set(code, listed + 1);
    return true;
  }
}

const RECORD_FILE_EXTENSIONS = new Set(['.jsonl', '.json']);

/** Problems that are information only: they never make `validate` fail. */
export const INFORMATIONAL_CODES: ReadonlySet<string> = new Set([
  'torn_tail',
  'blank_line',
  'writer_violation_crlf',
  'writer_violation_bom',
  'writer_violation_unescaped_separator',
]);

/** Deepest directory level walked, as in store discovery (spec TJ-FAM-025). */
const MAX_DEPTH = 32;

// `unknown_record` is counted (as `unknown`), not listed: validate reports what breaks the schemas.
const NOT_LISTED = new Set(['unknown_record']);

/**
 * Every `.jsonl` and `.json` file under the given paths (files are taken as given), sorted for stable output. A path
 * that cannot be listed or inspected (a dangling link, no permission) is returned too, so `validateFile` reports it.
 * Directory links are followed only when given: one found inside a directory is not walked (a link to `/` would walk
 * the whole file system; spec TJ-FAM-025). File links and special files with a record file's name are returned:
 * `validateFile` reads a link's target only when it is a regular file and reports FIFOs, sockets and devices as
 * `special_file` without opening them for a blocking read (TJ-FAM-024). Directories are walked at most
 * `MAX_DEPTH` levels deep, and each (device, inode) once, so bind mounts and loops end.
 */
export function findRecordFiles(paths: readonly string[]): string[] {
  const found: string[] = [];
  const seen = new Set<string>();
  const visit = (path: string, depth: number, entry?: Dirent) => {
    const explicit = entry === undefined;
    let stats: Stats | undefined;
    try {
      if (explicit || entry.isDirectory()) stats = statSync(path);
    } catch {
      found.push(path);
      return;
    }
    if (stats?.isDirectory() === true) {
      const key = `${stats.dev}:${stats.ino}`;
      if (seen.has(key)) return;
      // Too deep to walk: returned, so that validateFile reports it (a directory is not read) instead of passing it.
      if (depth >= MAX_DEPTH) {
        found.push(path);
        return;
      }
      seen.add(key);
      let entries: Dirent[];
      try {
        entries = readdirSync(path, { withFileTypes: true }).sort((a, b) =>
          a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
        );
      } catch {
        found.push(path);
        return;
      }
      for (const child of entries) visit(join(path, child.name), depth + 1, child);
      return;
    }
    // A file link or special file inside a directory is listed under a record file's name, like a regular file:
    // validateFile opens it without blocking and refuses anything but a regular file.
    if (explicit || RECORD_FILE_EXTENSIONS.has(extname(path))) found.push(path);
  };
  for (const path of paths) visit(path, 0);
  return found;
}

/**
 * Validates every record of one file. Never throws: unreadable files and bad content become problems. At most
 * {@link MAX_PROBLEMS_PER_CODE} problems of a code are listed, and no more than `budget` still allows over the run;
 * the others are counted in `omitted`, so memory and output follow the caps, not the file.
 */
export async function validateFile(path: string, budget: ProblemBudget = new ProblemBudget()): Promise<FileValidation> {
  const counts: Record<string, number> = {};
  const problems: FileProblem[] = [];
  const listed = new Map<string, number>();
  const omitted: Record<string, number> = {};
  const count = (status: string) => {
    counts[status] = (counts[status] ?? 0) + 1;
  };
  const report = (code: string, problem: () => FileProblem) => {
    const inFile = listed.get(code) ?? 0;
    if (inFile >= MAX_PROBLEMS_PER_CODE || !budget.take(code)) {
      omitted[code] = (omitted[code] ?? 0) + 1;
      return;
    }
    listed.set(code, inFile + 1);
    problems.push(problem());
  };
  const reportFinding = (finding: Finding, line: number) => {
    const problem = problemOf(finding, line);
    report(problem.code, () => problem);
  };
  try {
    if (extname(path) === '.json') {
      // A .json file is one state document (spec TJ-FAM-008): anything else in it is an invalid state record.
      const state = await readStateDocument(path);
      if (state.status !== 'malformed_document') count(state.status === 'invalid_record' ? 'invalid' : state.status);
      for (const finding of state.findings) reportFinding(finding, 1);
      return { path, counts, problems, omitted };
    }
    let lastLine = 0;
    for await (const batch of readJournal(path, { salvage: false })) {
      for (const item of batch) {
        if (item.kind === 'record') {
          const { validation, line } = item.record;
          lastLine = line;
          count(validation.status);
          // The reader reports an invalid record just before the record itself; give that problem the schema errors.
          const last = problems[problems.length - 1];
          if (validation.status === 'invalid' && last?.code === 'invalid_record' && last.line === line) {
            problems[problems.length - 1] = { ...last, errors: validation.errors };
          }
          continue;
        }
        const { finding } = item;
        lastLine = finding.line ?? lastLine;
        // The torn tail has no line of its own; it sits where the next line would start.
        if (!NOT_LISTED.has(finding.code)) reportFinding(finding, finding.line ?? lastLine + 1);
      }
    }
  } catch (error) {
    // Every failure of the read is reported, none thrown: a FIFO, socket or device is refused by the reader with a
    // `special_file` finding before any read (TJ-FAM-024); anything else (EACCES, EIO, EISDIR…) is `unreadable_file`.
    const finding = (error as { finding?: Finding }).finding;
    if (finding?.code === 'special_file') reportFinding(finding, 0);
    else {
      const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      report('unreadable_file', () => ({
        code: 'unreadable_file',
        line: 0,
        message: `cannot read the file (${reason})`,
      }));
    }
  }
  return { path, counts, problems, omitted };
}

function problemOf(finding: Finding, line: number): FileProblem {
  return {
    code: finding.code === 'malformed_document' ? 'malformed_line' : finding.code,
    line,
    message: finding.message,
  };
}
