import type { RecordStore } from '@turnjournal/reader/record-store';
import { ConformanceError } from '../errors.js';

/**
 * What a maintenance command (check, inspect, audit, recover, compact) reads and writes: files under paths, or one
 * record store named by its URL (spec §19). A PostgreSQL store is `postgres://…?store=<name>` (or `postgresql://`),
 * opened through `@turnjournal/postgres`, which the project installs beside the CLI.
 */
export type CommandTarget =
  | { readonly kind: 'paths'; readonly paths: readonly string[] }
  | {
      readonly kind: 'store';
      readonly store: RecordStore;
      /** The URL as reports print it: without its password. */
      readonly shown: string;
      close(): Promise<void>;
    };

/** The part of `@turnjournal/postgres` the CLI uses, loaded when a command names a PostgreSQL store. */
interface PostgresBinding {
  openPostgresRecordStore(options: {
    readonly connectionString: string;
    readonly store: string;
    readonly setup?: boolean;
  }): RecordStore & { setup(): Promise<void>; close(): Promise<void> };
  readonly SCHEMA_VERSION: number;
}

// A variable, so that the compiler and bundlers leave the optional package to run time.
const POSTGRES_PACKAGE = '@turnjournal/postgres';

/** True when a command-line target names a record store rather than a path. */
export function isStoreUrl(target: string): boolean {
  return /^postgres(ql)?:\/\//i.test(target);
}

/**
 * Opens what the command's targets name: the paths as they are, or the one store URL among them (a store is checked
 * alone: mixing it with paths, or naming two, is a usage error).
 */
export async function openTarget(command: string, targets: readonly string[]): Promise<CommandTarget> {
  const urls = targets.filter(isStoreUrl);
  if (urls.length === 0) return { kind: 'paths', paths: targets };
  if (targets.length > 1)
    throw new ConformanceError('usage', `${command}: a store URL is checked alone, not with other targets`);
  const url = urls[0] as string;
  const { store } = await openStoreUrl(command, url);
  return { kind: 'store', store, shown: withoutPassword(url), close: () => store.close() };
}

/** A PostgreSQL store the CLI opened, and the binding's schema version. */
export interface OpenedStore {
  readonly store: RecordStore & { setup(): Promise<void>; close(): Promise<void> };
  readonly schemaVersion: number;
}

/**
 * Opens the store a `postgres://…?store=<name>` URL names, without creating its tables (maintenance reads and writes
 * an existing store; `turnjournal pg migrate` creates them). `storeName` stands in when the URL names none and the
 * command does not need one.
 */
export async function openStoreUrl(command: string, url: string, storeName?: string): Promise<OpenedStore> {
  const split = splitStoreName(command, url, storeName);
  let binding: PostgresBinding;
  try {
    binding = (await import(POSTGRES_PACKAGE)) as PostgresBinding;
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new ConformanceError(
      'usage',
      `${command}: a postgres:// store needs the @turnjournal/postgres package installed beside @turnjournal/conformance`,
    );
  }
  const store = binding.openPostgresRecordStore({
    connectionString: split.connectionString,
    store: split.storeName,
    setup: false,
  });
  return { store, schemaVersion: binding.SCHEMA_VERSION };
}

/** The connection string without the `store` parameter, and the store's name from it. */
function splitStoreName(
  command: string,
  url: string,
  fallback?: string,
): { connectionString: string; storeName: string } {
  const match = /([?&])store=([^&#]*)/.exec(url);
  if (match === null) {
    if (fallback !== undefined) return { connectionString: url, storeName: fallback };
    throw new ConformanceError('usage', `${command}: name the store in the URL, e.g. postgres://host/db?store=chat`);
  }
  const storeName = decodeURIComponent(match[2] as string);
  if (storeName === '') throw new ConformanceError('usage', `${command}: the URL's store= parameter is empty`);
  const before = url.slice(0, match.index);
  const after = url.slice(match.index + match[0].length);
  // `?store=x&a=b` keeps `?a=b`; `?a=b&store=x` keeps `?a=b`.
  const rest = match[1] === '?' && after.startsWith('&') ? `?${after.slice(1)}` : after;
  return { connectionString: before + rest, storeName };
}

/** The URL with its password, if any, replaced by `***`: reports and errors never print a secret. */
export function withoutPassword(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@?#]*):[^@/?#]*@/i, '$1:***@');
}
