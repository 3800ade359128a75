import type { Finding } from '@turnjournal/schema';
import { type ReadJournalOptions, readJournal } from '../framing/read-journal.js';
import { type DerivedRun, RunFold } from './fold-run.js';

/** A run file as read: the derived run, with every finding of the read. */
export interface ReadRunResult extends DerivedRun {
  /** The file read. */
  readonly file: string;
  /** Framing, schema and derivation findings together, in file order (by byte offset). */
  readonly findings: readonly Finding[];
}

// Findings the schema layer makes about one record; under an unsupported header they judge a v2 record by v1 rules.
const RECORD_LEVEL_CODES: ReadonlySet<string> = new Set(['invalid_record', 'unknown_record', 'unsupported_version']);

/**
 * Reads one run file as a stream (TJ-FRAME-033) and folds it with {@link RunFold} (spec §7, §16). Options are those of
 * `readJournal`: the recovery mode decides what happens after damage, as for any journal.
 *
 * When the header declares an unsupported `schema_version`, the file yields one `unsupported_version` finding
 * (TJ-COMPAT-012): the framing layer's per-record verdicts on the header and on every later record are dropped, since
 * v1 rules do not apply to them. Framing findings (damage, torn tail) are kept: framing does not depend on the version.
 * In `strict` mode the framing layer judges records before the fold sees the header, so a later record that is
 * invalid under v1 still fails the read.
 *
 * Throws the file system error when the file cannot be opened or read (ENOENT included), and `ReaderError` in
 * `strict` mode; never throws for content otherwise.
 */
export async function readRunFile(path: string, options: ReadJournalOptions = {}): Promise<ReadRunResult> {
  const fold = new RunFold();
  const framing: Finding[] = [];
  const source = { file: path };
  for await (const batch of readJournal(path, options)) {
    for (const item of batch) {
      if (item.kind === 'record') fold.add(item.record, source);
      else framing.push(item.finding);
    }
  }
  const run = fold.finish();
  const header = run.unsupportedVersion === undefined ? undefined : run.findings.find(isVersionFinding);
  const kept =
    header === undefined
      ? framing
      : framing.filter((f) => !RECORD_LEVEL_CODES.has(f.code) || (f.offset ?? 0) < (header.offset ?? 0));
  const findings = [...kept, ...run.findings];
  // Stable sort: at one offset framing findings come before the derivation findings about the same record.
  findings.sort((x, y) => (x.offset ?? Number.POSITIVE_INFINITY) - (y.offset ?? Number.POSITIVE_INFINITY));
  return { ...run, file: path, findings };
}

function isVersionFinding(finding: Finding): boolean {
  return finding.code === 'unsupported_version';
}
