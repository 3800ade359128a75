import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { type RecordError, type RecordValidation, validateRecord } from '@turnjournal/schema';

/**
 * Record-level validation of files, the work behind `turnjournal validate`. It checks each complete line (or a whole
 * `.json` state document) against the v1 schemas. It is not the tolerant streaming reader: files are read whole and
 * are capped at {@link MAX_VALIDATE_FILE_BYTES}; framing, derivation and audit belong to `@turnjournal/reader`.
 */

/** Largest file `validate` reads; larger files get a clear finding instead of an out-of-memory crash. */
export const MAX_VALIDATE_FILE_BYTES = 64 * 1024 * 1024;

/** One problem found in a file, with its line (1-based; 0 for the file itself). */
export interface FileProblem {
  /** `invalid_record`, `malformed_line`, `unsupported_version`, `unreadable_file`, or the informational `torn_tail` and `blank_line`. */
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
  /** Problems, in file order. */
  readonly problems: readonly FileProblem[];
}

const RECORD_FILE_EXTENSIONS = new Set(['.jsonl', '.json']);

/** Problems that are information only: they never make `validate` fail. */
export const INFORMATIONAL_CODES: ReadonlySet<string> = new Set(['torn_tail', 'blank_line']);

/**
 * Every `.jsonl` and `.json` file under the given paths (files are taken as given), sorted for stable output. A path
 * that cannot be listed or inspected (a dangling link, no permission) is returned too, so `validateFile` reports it.
 */
export function findRecordFiles(paths: readonly string[]): string[] {
  const found: string[] = [];
  const visit = (path: string, explicit: boolean) => {
    let entries: string[] | undefined;
    try {
      entries = statSync(path).isDirectory() ? readdirSync(path).sort() : undefined;
    } catch {
      found.push(path);
      return;
    }
    if (entries !== undefined) for (const entry of entries) visit(join(path, entry), false);
    else if (explicit || RECORD_FILE_EXTENSIONS.has(extname(path))) found.push(path);
  };
  for (const path of paths) visit(path, true);
  return found;
}

/** Validates every record of one file. Never throws for bad content: every problem becomes a {@link FileProblem}. */
export function validateFile(path: string): FileValidation {
  const counts: Record<string, number> = {};
  const problems: FileProblem[] = [];
  let bytes: Buffer;
  try {
    const size = statSync(path).size;
    if (size > MAX_VALIDATE_FILE_BYTES) {
      const message = `file is ${size} bytes; validate reads files of at most ${MAX_VALIDATE_FILE_BYTES} bytes`;
      return { path, counts, problems: [{ code: 'unreadable_file', line: 0, message }] };
    }
    bytes = readFileSync(path);
  } catch (error) {
    const message = `cannot read the file (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
    return { path, counts, problems: [{ code: 'unreadable_file', line: 0, message }] };
  }
  const note = (line: number, validation: RecordValidation) => {
    counts[validation.status] = (counts[validation.status] ?? 0) + 1;
    if (validation.status === 'invalid') {
      const first = validation.errors[0]?.message ?? 'invalid record';
      problems.push({ code: 'invalid_record', line, message: first, errors: validation.errors });
    } else if (validation.status === 'unsupported_version') {
      problems.push({
        code: 'unsupported_version',
        line,
        message: `major version ${validation.version} is not supported`,
      });
    }
  };
  if (extname(path) === '.json') {
    // A .json file is read as one state document (spec TJ-FAM-008), so it must be recognised as one (§9.4).
    const parsed = parseLine(bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes);
    if (!parsed.ok) problems.push({ code: 'malformed_line', line: 1, message: parsed.message });
    else {
      const validation = validateRecord(parsed.value);
      if (validation.classification.family === 'state') note(1, validation);
      else {
        counts.invalid = (counts.invalid ?? 0) + 1;
        problems.push({
          code: 'invalid_record',
          line: 1,
          message: 'a state document must be an object with "schema_version"',
        });
      }
    }
    return { path, counts, problems };
  }
  let start = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  let line = 0;
  while (start < bytes.length) {
    line += 1;
    const end = bytes.indexOf(0x0a, start);
    if (end < 0) {
      problems.push({
        code: 'torn_tail',
        line,
        message: `${bytes.length - start} byte(s) after the last LF are not a committed record`,
      });
      break;
    }
    const content = bytes.subarray(start, end > start && bytes[end - 1] === 0x0d ? end - 1 : end);
    start = end + 1;
    if (content.every((byte) => byte === 0x20 || byte === 0x09)) {
      problems.push({ code: 'blank_line', line, message: 'blank line skipped' });
      continue;
    }
    const parsed = parseLine(content);
    if (parsed.ok) note(line, validateRecord(parsed.value));
    else problems.push({ code: 'malformed_line', line, message: parsed.message });
  }
  return { path, counts, problems };
}

// ignoreBOM keeps a BOM inside the file as content, so a line that starts with one is not JSON (spec §3.2).
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function parseLine(bytes: Uint8Array): { ok: true; value: unknown } | { ok: false; message: string } {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { ok: false, message: 'line is not valid UTF-8' };
  }
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, message: `line is not JSON (${(error as Error).message})` };
  }
}
