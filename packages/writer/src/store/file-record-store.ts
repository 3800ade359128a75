import { dirname, join } from 'node:path';
import type {
  JournalReader,
  ListOptions,
  OpenJournalOptions,
  RecordStore,
  StoreEntry,
  WritableJournal,
} from '@turnjournal/reader/record-store';
import {
  EVENT_LOG_FILE_NAME,
  isReservedFileName,
  isValidIdentifier,
  lockStatusOf,
  SESSIONS_DIR,
  STATE_DIR,
  type StoreLocation,
  safeParseStorePath,
  storePathSegments,
  TURN_JOURNAL_DIR,
} from '@turnjournal/reader/store-format';
import { AppendFile } from '../append/append-file.js';
import { WriterError } from '../errors.js';
import { ensureDirectory, replaceFile } from '../fs/durable-ops.js';
import { type FileSystem, nodeFileSystem } from '../fs/file-system.js';
import { type AcquireLockOptions, acquireLock } from '../fs/lock.js';
import { openFileJournalReader } from './file-journal-view.js';
import { FileStoreChannel } from './file-store-channel.js';

/** Options of {@link openFileRecordStore}. */
export interface FileRecordStoreOptions {
  /** The store's root directory: every journal lives at its location's path under it (spec §4.4). */
  readonly root: string;
  /** The file-system layer; the real one by default. */
  readonly fs?: FileSystem;
  /** Options of the lock acquisitions of {@link RecordStore.openJournal}. */
  readonly lock?: AcquireLockOptions;
  /** How often a listener of another process's announcements reads their durable mark; 25 ms by default. */
  readonly channelPollMs?: number;
}

/** The file store: the `RecordStore` of a directory, the embedded default of every writer and hub. */
export interface FileRecordStore extends RecordStore {
  /** The store's root directory. */
  readonly root: string;
  /** The file-system layer it reaches the files through. */
  readonly fs: FileSystem;
  /** The path of `location` under the root (a valid location only, TJ-FAM-010). */
  pathOf(location: StoreLocation): string;
}

type StateLocation = StoreLocation & { readonly family: 'state' };

/** Opens the file store of `options.root` (nothing is created until a journal is opened for writing). */
export function openFileRecordStore(options: FileRecordStoreOptions): FileRecordStore {
  if (typeof options?.root !== 'string' || options.root.length === 0)
    throw new WriterError('invalid_option', 'a file store needs `root`, a non-empty directory path');
  const pollMs = options.channelPollMs ?? 25;
  if (!Number.isSafeInteger(pollMs) || pollMs < 1)
    throw new WriterError('invalid_option', `channelPollMs must be a positive integer, got ${String(pollMs)}`);
  const root = options.root;
  const fs = options.fs ?? nodeFileSystem;
  const channel = new FileStoreChannel(fs, root, pollMs);
  const pathOf = (location: StoreLocation): string => join(root, ...storePathSegments(location));
  return {
    name: root,
    root,
    fs,
    channel,
    pathOf,
    async openJournal(location: StoreLocation, journal: OpenJournalOptions): Promise<WritableJournal> {
      if (location.family === 'state')
        throw new WriterError('invalid_option', 'a state document is not a journal: use replaceDocument');
      const path = pathOf(location);
      await ensureDirectory(fs, dirname(path));
      const file = await AppendFile.open(path, {
        durability: journal.durability,
        fs,
        ...(journal.maxLineBytes === undefined ? {} : { maxLineBytes: journal.maxLineBytes }),
        ...(options.lock === undefined ? {} : { lock: options.lock }),
      });
      // Appends refused after a failed one stay refused until the owner has re-read the journal (see `resume`).
      file.resumeByOwner();
      return file;
    },
    async ownerHeld(location: StoreLocation): Promise<boolean> {
      const lock = `${pathOf(location)}.lock`;
      let text: string;
      let modifiedMs: number;
      try {
        text = Buffer.from(await fs.readFile(lock)).toString('utf8');
        modifiedMs = (await fs.stat(lock)).mtimeMs ?? Date.now();
      } catch (error) {
        if ((error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') return false;
        throw error;
      }
      const status = lockStatusOf(text, { modifiedMs, nowMs: Date.now() });
      return status === 'live' || status === 'unproven';
    },
    openReader(location: StoreLocation): Promise<JournalReader> {
      return openFileJournalReader(fs, pathOf(location));
    },
    list: (filter: ListOptions = {}) => listStore(fs, root, filter),
    async readDocument(location: StateLocation): Promise<Uint8Array | undefined> {
      try {
        return await fs.readFile(pathOf(location));
      } catch (error) {
        if ((error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') return undefined;
        throw error;
      }
    },
    async replaceDocument(location: StateLocation, bytes: Uint8Array): Promise<void> {
      const path = pathOf(location);
      await ensureDirectory(fs, dirname(path));
      // Under the document's lock (spec §11.4), as every writer of a state document replaces it.
      const lock = await acquireLock(fs, `${path}.lock`, path, options.lock);
      try {
        await replaceFile(fs, path, [bytes]);
      } finally {
        await lock.release();
      }
    },
  };
}

/** The names in `dir`, or none when it does not exist. */
async function namesIn(fs: FileSystem, dir: string): Promise<string[]> {
  try {
    return (await fs.readdir(dir)).sort();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw error;
  }
}

async function exists(fs: FileSystem, path: string): Promise<boolean> {
  try {
    return !(await fs.stat(path)).isDirectory;
  } catch (error) {
    if ((error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') return false;
    throw error;
  }
}

/**
 * The journals and documents at their recommended places (spec §4.4), in a stable order. Only what a store opened
 * can reopen is listed: names with invalid ids, reserved files and anything outside the layout are the checker's to
 * report (`turnjournal check`), not the store's to hand out.
 */
async function* listStore(fs: FileSystem, root: string, filter: ListOptions): AsyncGenerator<StoreEntry> {
  const wanted = (location: StoreLocation | undefined): location is StoreLocation => {
    if (location === undefined) return false;
    if (filter.family !== undefined && location.family !== filter.family) return false;
    const id = location.family === 'run' ? location.runId : location.sessionId;
    if (!isValidIdentifier(id)) return false;
    if (location.family === 'turn' && location.shard !== undefined && !isValidIdentifier(location.shard)) return false;
    if (filter.sessionId !== undefined && (location.family === 'run' || location.sessionId !== filter.sessionId))
      return false;
    return true;
  };
  const entry = (segments: string[]): StoreEntry | undefined => {
    const location = safeParseStorePath(segments);
    return wanted(location) ? { location, name: join(root, ...segments) } : undefined;
  };
  const families = filter.family === undefined ? ['turn', 'event', 'run', 'state'] : [filter.family];
  if (families.includes('turn')) {
    for (const name of await namesIn(fs, join(root, TURN_JOURNAL_DIR))) {
      if (isReservedFileName(name)) continue;
      const found = entry([TURN_JOURNAL_DIR, name]);
      if (found !== undefined) yield found;
    }
  }
  if (families.includes('event')) {
    const sessions = filter.sessionId === undefined ? await namesIn(fs, root) : [filter.sessionId];
    for (const name of sessions) {
      if (name === TURN_JOURNAL_DIR || name === SESSIONS_DIR || !isValidIdentifier(name)) continue;
      const found = entry([name, EVENT_LOG_FILE_NAME]);
      if (found !== undefined && (await exists(fs, found.name))) yield found;
    }
  }
  if (families.includes('run') && filter.sessionId === undefined) {
    for (const year of await namesIn(fs, join(root, SESSIONS_DIR))) {
      if (!/^\d{4}$/.test(year)) continue;
      for (const month of await namesIn(fs, join(root, SESSIONS_DIR, year))) {
        for (const day of await namesIn(fs, join(root, SESSIONS_DIR, year, month))) {
          for (const name of await namesIn(fs, join(root, SESSIONS_DIR, year, month, day))) {
            if (isReservedFileName(name)) continue;
            const found = entry([SESSIONS_DIR, year, month, day, name]);
            if (found !== undefined) yield found;
          }
        }
      }
    }
  }
  if (families.includes('state')) {
    for (const name of await namesIn(fs, join(root, SESSIONS_DIR, STATE_DIR))) {
      if (isReservedFileName(name)) continue;
      const found = entry([SESSIONS_DIR, STATE_DIR, name]);
      if (found !== undefined) yield found;
    }
  }
}
