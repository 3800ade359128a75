import { WriterError } from '../errors.js';
import { type FileSystem, nodeFileSystem } from '../fs/file-system.js';
import type { AcquireLockOptions } from '../fs/lock.js';
import { DURABILITY_MODES, type Durability } from './append-file.js';
import { DEFAULT_MAX_LINE_BYTES } from './encode-record.js';

/** The options every writer shares, as callers give them. */
export interface WriterOptionsInput {
  readonly durability?: Durability | undefined;
  readonly fs?: FileSystem | undefined;
  readonly clock?: (() => number) | undefined;
  readonly maxLineBytes?: number | undefined;
  readonly lock?: AcquireLockOptions | undefined;
  /** A record store whose own clock (a database's, TJ-STORE-026) is the default when `clock` is not given. */
  readonly store?: { readonly clock?: (() => number) | undefined } | undefined;
}

/** The shared options with their defaults applied and checked. */
export interface WriterOptions {
  readonly durability: Durability;
  readonly fs: FileSystem;
  readonly clock: () => number;
  readonly maxLineBytes: number;
  readonly lock: AcquireLockOptions | undefined;
}

/**
 * The one option resolver of the writers: applies the defaults (`every`, the real file system, the store's clock or `Date.now`, the 16 MiB
 * line-size limit) and refuses, with `invalid_option`, a durability mode outside `allowed`, a clock that is not a
 * function and a line-size limit that is not a positive integer. `why` explains a refused mode the family forbids.
 */
export function resolveWriterOptions(
  options: WriterOptionsInput,
  allowed: readonly Durability[] = DURABILITY_MODES,
  why = '',
): WriterOptions {
  const durability = options.durability ?? 'every';
  if (!allowed.includes(durability))
    throw new WriterError(
      'invalid_option',
      `durability "${String(durability)}" is not allowed: use ${allowed.map((mode) => `"${mode}"`).join(' or ')}${why}`,
    );
  const clock = options.clock ?? options.store?.clock ?? Date.now;
  if (typeof clock !== 'function') throw new WriterError('invalid_option', '`clock` must be a function');
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  if (!Number.isSafeInteger(maxLineBytes) || maxLineBytes < 1)
    throw new WriterError('invalid_option', `maxLineBytes must be an integer >= 1, got ${String(maxLineBytes)}`);
  return { durability, fs: options.fs ?? nodeFileSystem, clock, maxLineBytes, lock: options.lock };
}

/** The {@link AppendFile.open} options from resolved writer options. */
export function appendFileOptions(options: WriterOptions): {
  durability: Durability;
  fs: FileSystem;
  maxLineBytes: number;
  lock?: AcquireLockOptions;
} {
  return {
    durability: options.durability,
    fs: options.fs,
    maxLineBytes: options.maxLineBytes,
    ...(options.lock === undefined ? {} : { lock: options.lock }),
  };
}
