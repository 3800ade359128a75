import { dirname, join, resolve } from 'node:path';
import type { RecordStore } from '@turnjournal/reader/record-store';
import { DEFAULT_MAX_DOCUMENT_BYTES, storePathSegments } from '@turnjournal/reader/store-format';
import type { SessionState } from '@turnjournal/schema';
import { requireValidRecord } from '../append/require-valid.js';
import { WriterError } from '../errors.js';
import { ensureDirectory, replaceFile } from '../fs/durable-ops.js';
import { type FileSystem, nodeFileSystem } from '../fs/file-system.js';
import { type AcquireLockOptions, acquireLock } from '../fs/lock.js';
import { requireIdentifier } from '../require-identifier.js';
import { toUtcTimestamp } from '../run/run-path.js';

/**
 * The content of a state document (spec §8) as the caller gives it. `messages` is required; the writer fills in
 * `schema_version` (1), `session_id` (from the `sessionId` option) and `updated_at` (from the clock) when they are
 * absent. Unknown members are written as given.
 */
export interface SessionStateInput {
  /** Major version; 1 when absent. Any other value is refused. */
  readonly schema_version?: number;
  /** The session; with `root` it defaults to, and must equal, the `sessionId` option. */
  readonly session_id?: string;
  /** When the snapshot was taken; the clock's time (RFC 3339 UTC) when absent. */
  readonly updated_at?: string;
  /** The last run of the session. */
  readonly run_id?: string;
  /** The `seq` of the last `llm.request` the snapshot reflects; it keeps the document from being `stale_state`. */
  readonly invoke_seq?: number;
  /** The session's message history: objects with a string `role`. */
  readonly messages: readonly { readonly role: string; readonly [member: string]: unknown }[];
  /** Extension data. */
  readonly meta?: Readonly<Record<string, unknown>>;
  /** Further members are written as given. */
  readonly [member: string]: unknown;
}

/** Options of {@link writeStateDocument} shared by its `root` and `file` forms. */
export interface WriteStateCommonOptions {
  /** The document to write. */
  readonly state: SessionStateInput;
  /** The file-system layer; the real one by default. */
  readonly fs?: FileSystem;
  /** Wall clock in epoch milliseconds, for a missing `updated_at`; `Date.now` by default. */
  readonly clock?: () => number;
  /** Options of the lock acquisition. */
  readonly lock?: AcquireLockOptions;
  /** Size limit of the document in bytes; the reader's default (64 MiB, TJ-STATE-003) by default. */
  readonly maxDocumentBytes?: number;
}

/**
 * Options of {@link writeStateDocument}: either a store `root` and a `sessionId`, and the document is the
 * recommended `<root>/sessions/state/<sessionId>.json` (spec §4.4), or an explicit `file`.
 */
export type WriteStateDocumentOptions =
  | (WriteStateCommonOptions & {
      /** The store root. */
      readonly root: string;
      /** The session; a valid identifier (spec §4.3), checked before any path is built (TJ-FAM-010). */
      readonly sessionId: string;
      /** Not with `root`. */
      readonly file?: undefined;
      /** Not with `root`. */
      readonly store?: undefined;
    })
  | (WriteStateCommonOptions & {
      /** The state document; its directory is created durably when missing. */
      readonly file: string;
      /** Not with `file`. */
      readonly root?: undefined;
      /** Not with `file`: the document's own `session_id` names the session. */
      readonly sessionId?: undefined;
      /** Not with `file`. */
      readonly store?: undefined;
    })
  | (WriteStateCommonOptions & {
      /**
       * A record store (spec §19): the document is its document at `{ family: 'state', sessionId }`, replaced whole and
       * atomically (TJ-STORE-006). `fs` and `lock` are then the store's business.
       */
      readonly store: RecordStore;
      /** The session; a valid identifier (spec §4.3). */
      readonly sessionId: string;
      /** Not with `store`. */
      readonly root?: undefined;
      /** Not with `store`. */
      readonly file?: undefined;
    });

/** What {@link writeStateDocument} wrote. */
export interface StateDocumentWritten {
  /** The state document: its path, or, written through a store, the store's name and the document's place in it. */
  readonly file: string;
  /** The document as written, defaults filled in. */
  readonly state: SessionState;
}

/**
 * The recommended path of a session's state document (spec §4.4): `<root>/sessions/state/<sessionId>.json`. The
 * session id is checked before the path is built (TJ-FAM-010).
 */
export function stateDocumentPath(root: string, sessionId: string): string {
  requireIdentifier(sessionId, 'session id');
  return join(root, ...storePathSegments({ family: 'state', sessionId }));
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Snapshots being written by this process, per absolute path: a second one waits for the first. */
const inProcess = new Map<string, Promise<unknown>>();

/**
 * Writes a session state snapshot (spec §8), replacing the previous one atomically (TJ-STATE-005): a temporary file
 * in the same directory, fsync, rename over the document, fsync of the directory (TJ-DUR-009), after removing the
 * temporaries of an earlier crashed replace (TJ-DUR-010). A crash at any point leaves either the old document or the
 * new one, never a mix or a partial document; a failure before the rename removes the temporary file and leaves the
 * old document as it was.
 *
 * The document is validated as it will be written, against the v1 `SessionState` schema (TJ-STATE-001,
 * TJ-COMPAT-018): a schema-invalid state is refused with `invalid_record` and nothing is written. Defaults: see
 * {@link SessionStateInput}. With `root`, the session id is checked before any path is built (TJ-FAM-010) and the
 * directories are created with a fsync of each new directory's parent (TJ-DUR-008).
 *
 * Concurrency: the replace runs under the document's lock, `<file>.lock` (spec §11.4), so two processes never race
 * on one snapshot: while another live process holds it this rejects with `JournalLockedError` (`journal_locked`) and
 * the caller retries; a lock left by a dead process is taken over (TJ-DUR-019). Calls in one process for the same
 * document are queued, not refused, and the last call's document is the one that stays.
 */
export async function writeStateDocument(options: WriteStateDocumentOptions): Promise<StateDocumentWritten> {
  if (typeof options !== 'object' || options === null)
    throw new WriterError('invalid_option', 'writeStateDocument needs an options object');
  let path: string;
  let sessionId: string | undefined;
  if (options.store !== undefined) {
    const { store } = options;
    if (options.root !== undefined || options.file !== undefined)
      throw new WriterError('invalid_option', 'writeStateDocument needs exactly one of `store`, `root` and `file`');
    if (typeof store !== 'object' || store === null || typeof store.replaceDocument !== 'function')
      throw new WriterError('invalid_option', '`store` must be a record store (see @turnjournal/reader/record-store)');
    requireIdentifier(options.sessionId, 'session id');
    const { state, bytes } = encodeState(options, options.sessionId, store.name);
    const location = { family: 'state', sessionId: options.sessionId } as const;
    await store.replaceDocument(location, bytes);
    return { file: `${store.name}/${storePathSegments(location).join('/')}`, state };
  }
  if (options.root !== undefined && options.file === undefined) {
    if (typeof options.root !== 'string' || options.root.length === 0)
      throw new WriterError('invalid_option', 'the store root must be a non-empty path');
    path = stateDocumentPath(options.root, options.sessionId);
    sessionId = options.sessionId;
  } else if (options.file !== undefined && options.root === undefined && typeof options.file === 'string') {
    if (options.file.length === 0) throw new WriterError('invalid_option', 'the state document path is empty');
    path = options.file;
  } else throw new WriterError('invalid_option', 'writeStateDocument needs exactly one of `root` and `file`');
  const { state, bytes } = encodeState(options, sessionId, path);

  const key = resolve(path);
  const before = inProcess.get(key);
  const run = (async () => {
    if (before !== undefined) await before.catch(() => undefined);
    const fs = options.fs ?? nodeFileSystem;
    await ensureDirectory(fs, dirname(path));
    const lock = await acquireLock(fs, `${path}.lock`, path, options.lock);
    try {
      await replaceFile(fs, path, [bytes]);
    } finally {
      await lock.release();
    }
  })();
  inProcess.set(key, run);
  try {
    await run;
  } finally {
    if (inProcess.get(key) === run) inProcess.delete(key);
  }
  return { file: path, state };
}

function encodeState(
  options: WriteStateDocumentOptions,
  sessionId: string | undefined,
  path: string,
): { state: SessionState; bytes: Uint8Array } {
  const input = options.state;
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw new WriterError('invalid_record', 'the state must be an object', path);
  if (sessionId !== undefined && input.session_id !== undefined && input.session_id !== sessionId)
    throw new WriterError(
      'invalid_record',
      `the state names session ${JSON.stringify(input.session_id)}, but it is written as session ${JSON.stringify(sessionId)}`,
      path,
    );
  let updatedAt = input.updated_at;
  if (updatedAt === undefined) {
    const now = new Date((options.clock ?? Date.now)());
    if (!Number.isFinite(now.getTime()))
      throw new WriterError('invalid_option', 'the clock returned an invalid time', path);
    updatedAt = toUtcTimestamp(now).text;
  }
  const document = {
    ...input,
    schema_version: input.schema_version ?? 1,
    session_id: input.session_id ?? sessionId,
    updated_at: updatedAt,
  };
  let text: string | undefined;
  try {
    text = JSON.stringify(document, null, 2);
  } catch (error) {
    throw new WriterError('invalid_record', `the state cannot be serialised as JSON: ${String(error)}`, path, {
      cause: error,
    });
  }
  if (text === undefined) throw new WriterError('invalid_record', 'the state does not serialise to JSON', path);
  const bytes = encoder.encode(`${text}\n`);
  const limit = options.maxDocumentBytes ?? DEFAULT_MAX_DOCUMENT_BYTES;
  if (bytes.length > limit)
    throw new WriterError(
      'line_too_long',
      `the state document is ${bytes.length} bytes, over the ${limit}-byte document limit of readers (TJ-STATE-003)`,
      path,
    );
  // Validate what will be on disk, so that JSON.stringify's own changes (undefined dropped, NaN → null) are judged too.
  const written = JSON.parse(decoder.decode(bytes)) as Record<string, unknown>;
  requireValidRecord(written, 'SessionState', path);
  return { state: written as SessionState, bytes };
}
