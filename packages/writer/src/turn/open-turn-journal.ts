import { join } from 'node:path';
import type { WritableJournal } from '@turnjournal/reader/record-store';
import { storePathSegments } from '@turnjournal/reader/store-format';
import { AppendFile } from '../append/append-file.js';
import { appendFileOptions, resolveWriterOptions } from '../append/writer-options.js';
import { WriterError } from '../errors.js';
import { afterFailure } from '../fs/after-failure.js';
import { ensureDirectory } from '../fs/durable-ops.js';
import { requireIdentifier } from '../require-identifier.js';
import { readTurnRecords } from './read-turn-records.js';
import { SiblingShards } from './sibling-shards.js';
import { type Siblings, StoreSiblings } from './store-siblings.js';
import { TurnJournal } from './turn-journal.js';
import type { OpenTurnJournalOptions } from './turn-journal-inputs.js';
import { TurnTable } from './turn-table.js';

/** The file name of a session's turn journal: `<sessionId>.jsonl` or `<sessionId>~<shard>.jsonl` (spec §4.4). */
export function turnJournalFileName(sessionId: string, shard?: string): string {
  requireIdentifier(sessionId, 'session id');
  if (shard !== undefined) requireIdentifier(shard, 'shard');
  return storePathSegments({ family: 'turn', sessionId, ...(shard === undefined ? {} : { shard }) }).at(-1) as string;
}

/**
 * Opens the turn journal of one session for writing (spec §5, §11): validates the ids, creates the directory and
 * the file durably or repairs a torn tail, takes the file's lock, and reads the session's turns (its own file and the
 * other shards of the session) so that transitions can be checked and retried submissions recognised.
 */
export async function openTurnJournal(options: OpenTurnJournalOptions): Promise<TurnJournal> {
  const resolved = resolveWriterOptions(options, ['every', 'group'], ' for turn journals (TJ-DUR-016)');
  const fs = resolved.fs;
  let file: WritableJournal;
  let siblings: (table: () => TurnTable) => Siblings;
  if (options.store !== undefined) {
    const { store, sessionId, shard } = options;
    const { dir, file: path } = options as { dir?: unknown; file?: unknown };
    if (dir !== undefined || path !== undefined)
      throw new WriterError('invalid_option', 'openTurnJournal needs exactly one of `store`, `dir` and `file`');
    if (typeof store !== 'object' || store === null || typeof store.openJournal !== 'function')
      throw new WriterError('invalid_option', '`store` must be a record store (see @turnjournal/reader/record-store)');
    turnJournalFileName(sessionId, shard);
    const location = { family: 'turn', sessionId, ...(shard === undefined ? {} : { shard }) } as const;
    file = await store.openJournal(location, { durability: resolved.durability, maxLineBytes: resolved.maxLineBytes });
    siblings = (table) => new StoreSiblings(store, location, sessionId, table);
  } else {
    let path: string;
    if (options.file !== undefined) {
      requireIdentifier(options.sessionId, 'session id');
      path = options.file;
    } else {
      path = join(options.dir, turnJournalFileName(options.sessionId, options.shard));
      await ensureDirectory(fs, options.dir);
    }
    file = await AppendFile.open(path, appendFileOptions(resolved));
    siblings = (table) => new SiblingShards(fs, path, options.sessionId, table);
  }
  try {
    const table = new TurnTable();
    const own = await readTurnRecords(file.name, file.reader(), table);
    const journal = new TurnJournal(
      file,
      options,
      resolved.clock,
      resolved.maxLineBytes,
      siblings,
      table,
      own.findings,
    );
    await journal.refreshSiblings();
    return journal;
  } catch (error) {
    throw await afterFailure(error, () => file.close());
  }
}
