import { dirname } from 'node:path';
import type { WritableJournal } from '@turnjournal/reader/record-store';
import type { RunHeader } from '@turnjournal/schema';
import { AppendFile } from '../append/append-file.js';
import { appendFileOptions, resolveWriterOptions } from '../append/writer-options.js';
import { WriterError } from '../errors.js';
import { afterFailure } from '../fs/after-failure.js';
import { ensureDirectory } from '../fs/durable-ops.js';
import { requireIdentifier } from '../require-identifier.js';
import { encodeRunRecord, optional } from './encode-run-record.js';
import { readExistingRun, runStateOf } from './read-existing-run.js';
import type { OpenRunWriterOptions, RunHeaderInput, RunOpenReport } from './run-inputs.js';
import { runFilePath, toUtcTimestamp } from './run-path.js';
import { RunWriter } from './run-writer.js';

/** The header record of a new run file, from the caller's input (`invalid_option` when it is not an object). */
function headerRecord(runId: string, header: RunHeaderInput): Record<string, unknown> {
  if (typeof header !== 'object' || header === null)
    throw new WriterError('invalid_option', 'openRunWriter needs a `header` object with `startedAt`');
  const startedAt = toUtcTimestamp(header.startedAt, 'started_at');
  return {
    type: 'header',
    schema_version: 1,
    run_id: runId,
    ...optional('session_id', header.sessionId),
    started_at: startedAt.text,
    ...optional('client', header.client),
    ...optional('server', header.server),
    ...optional('model', header.model),
    ...optional('prompts', header.prompts),
    ...optional('tools', header.tools),
    ...optional('runtime', header.runtime),
    ...optional('meta', header.meta),
  };
}

/**
 * Opens a run file for writing (spec §7, §11, §16), the per-run session store of seed 004.
 *
 * The run id is checked before any path is built (TJ-FAM-010) and the header before anything is created. With `root`
 * the file is `<root>/sessions/YYYY/MM/DD/<runId>.jsonl`, the UTC date of `header.startedAt` (spec §4.4); the
 * directories are created with a fsync of each new directory's parent (TJ-DUR-008). The file's lock is taken
 * (TJ-DUR-017) and a torn tail repaired (TJ-DUR-005).
 *
 * A new (or empty) file gets the header as its first record before this resolves (TJ-RUN-003). An existing file is a
 * run being continued by a restarted process: it is read back so that no second header is written (TJ-RUN-004),
 * `agent.event` numbering continues after the highest `seq` in the file, `llm.request` numbering after the highest
 * request `seq`, open requests can still be answered, and a run that already has `run.end` refuses every append
 * (`run_ended`). Opening is refused (`invalid_option`), and the file left untouched, when the file belongs to another
 * run (its header, or without one its first record, names another run id), to another family, or declares a
 * `schema_version` this writer does not write.
 */
export async function openRunWriter(options: OpenRunWriterOptions): Promise<RunWriter> {
  if (typeof options !== 'object' || options === null)
    throw new WriterError('invalid_option', 'openRunWriter needs an options object');
  requireIdentifier(options.runId, 'run id');
  const header = headerRecord(options.runId, options.header);
  const resolved = resolveWriterOptions(options);
  const firstLlmSeq = options.firstLlmSeq ?? 1;
  if (!Number.isSafeInteger(firstLlmSeq) || firstLlmSeq < 0)
    throw new WriterError('invalid_option', `firstLlmSeq must be an integer >= 0, got ${String(firstLlmSeq)}`);
  const maxLineBytes = resolved.maxLineBytes;
  let path: string;
  if (options.store !== undefined) {
    if (options.root !== undefined || options.file !== undefined)
      throw new WriterError('invalid_option', 'openRunWriter needs exactly one of `store`, `root` and `file`');
    if (typeof options.store !== 'object' || options.store === null || typeof options.store.openJournal !== 'function')
      throw new WriterError('invalid_option', '`store` must be a record store (see @turnjournal/reader/record-store)');
    path = options.store.name;
  } else if (options.root !== undefined && options.file === undefined) {
    if (typeof options.root !== 'string' || options.root.length === 0)
      throw new WriterError('invalid_option', 'the store root must be a non-empty path');
    path = runFilePath(options.root, options.runId, options.header.startedAt);
  } else if (options.file !== undefined && options.root === undefined && typeof options.file === 'string') {
    if (options.file.length === 0) throw new WriterError('invalid_option', 'the run file path is empty');
    path = options.file;
  } else throw new WriterError('invalid_option', 'openRunWriter needs exactly one of `root` and `file`');
  // Validate the header as it will be written before the first directory is created.
  const headerBytes = encodeRunRecord(header, 'header', true, maxLineBytes, path);

  let file: WritableJournal;
  if (options.store !== undefined) {
    const { year, month, day } = toUtcTimestamp(options.header.startedAt, 'started_at');
    file = await options.store.openJournal(
      { family: 'run', runId: options.runId, date: { year, month, day } },
      { durability: resolved.durability, maxLineBytes },
    );
    path = file.name;
  } else {
    await ensureDirectory(resolved.fs, dirname(path));
    file = await AppendFile.open(path, appendFileOptions(resolved));
  }
  try {
    const existing = await readExistingRun(path, file.reader(), maxLineBytes);
    if (existing.family !== undefined && existing.family !== 'run')
      throw new WriterError('invalid_option', `${path} holds ${existing.family} records, not a run`, path);
    if (existing.unsupportedVersion !== undefined)
      throw new WriterError(
        'invalid_option',
        `${path} declares schema_version ${existing.unsupportedVersion}; this writer writes version 1 only`,
        path,
      );
    if (existing.runId !== undefined && existing.runId !== options.runId)
      throw new WriterError(
        'invalid_option',
        `${path} belongs to run ${JSON.stringify(existing.runId)}, not ${JSON.stringify(options.runId)}`,
        path,
      );
    const resumed = existing.runId !== undefined;
    if (!resumed) await file.appendLine(headerBytes);
    const writtenHeader = resumed ? existing.header : (header as RunHeader);
    const report: RunOpenReport = { ...file.opened, headerWritten: !resumed, resumed };
    return new RunWriter(file, options.runId, resolved.clock, maxLineBytes, firstLlmSeq, report, writtenHeader, {
      ...runStateOf(existing, firstLlmSeq),
    });
  } catch (error) {
    throw await afterFailure(error, () => file.close());
  }
}
