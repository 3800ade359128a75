// Where the chat keeps its journals: a directory (the file store, one host) or a PostgreSQL store named by a URL
// (`postgres://…?store=<name>`, several hosts on one database: packages/postgres).
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';

/** True when `target` names a PostgreSQL store rather than a directory. */
export function isPostgresUrl(target) {
  return /^postgres(ql)?:\/\//i.test(target);
}

/**
 * The connection string of a store URL without its `store=` parameter, and the store's name from it. A URL naming no
 * store is refused: several apps may share one database, each in a store of its own.
 */
export function splitStoreUrl(url) {
  const match = /([?&])store=([^&#]*)/.exec(url);
  if (match === null)
    throw new Error(`--store ${redacted(url)}: name the store in the URL, e.g. postgres://host/db?store=chat`);
  const name = decodeURIComponent(match[2]);
  const after = url.slice(match.index + match[0].length);
  // `?store=x&a=b` keeps `?a=b`; `?a=b&store=x` keeps `?a=b`.
  const rest = match[1] === '?' && after.startsWith('&') ? `?${after.slice(1)}` : after;
  return { connectionString: url.slice(0, match.index) + rest, name };
}

/** The URL with its password replaced by `***`, for logs and errors. */
export function redacted(url) {
  return url.replace(/^([a-z]+:\/\/[^:/@?#]*):[^@/?#]*@/i, '$1:***@');
}

/**
 * Opens what `target` names, for `startChatServer`: `{ root }` for a directory (created when missing), or
 * `{ store }` for a PostgreSQL URL, its tables created when missing and the database's clock read (so that a wrong URL
 * fails here, at start, with the server's own message). `shown` is how logs name it; `close()` ends the store's pool.
 */
export async function openChatStore(target) {
  if (!isPostgresUrl(target)) {
    const root = resolve(target);
    mkdirSync(root, { recursive: true });
    return { root, shown: root, close: async () => undefined };
  }
  // Loaded only for a database: a chat on files needs neither pg nor a server.
  const { openPostgresRecordStore } = await import('@turnjournal/postgres');
  const { connectionString, name } = splitStoreUrl(target);
  const store = openPostgresRecordStore({ connectionString, store: name });
  try {
    await store.setup();
  } catch (error) {
    await store.close();
    throw new Error(`cannot open the store ${redacted(target)}: ${error?.message ?? error}`, { cause: error });
  }
  return { store, shown: redacted(target), close: () => store.close() };
}
