/**
 * The reader under test: the repository's built `packages/reader/dist` (what users run), or another build named by
 * the environment variable `TJ_BENCH_READER` (the path of its `index.js`), to compare two versions on one machine.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

type Reader = typeof import('../../packages/reader/dist/index.js');

/** Path of the reader's `index.js`, for child processes. */
export const READER_PATH = resolve(
  process.env.TJ_BENCH_READER ?? new URL('../../packages/reader/dist/index.js', import.meta.url).pathname,
);

/** The reader module. */
export const reader: Reader = await import(pathToFileURL(READER_PATH).href);
