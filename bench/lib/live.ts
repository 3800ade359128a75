/**
 * The live package under test: the repository's built `packages/live/dist` (built by the harness with the writer), or
 * another build named by `TJ_BENCH_LIVE` (the path of its `index.js`).
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

type Live = typeof import('../../packages/live/dist/index.js');

/** Path of the live package's `index.js`. */
export const LIVE_PATH = resolve(
  process.env.TJ_BENCH_LIVE ?? new URL('../../packages/live/dist/index.js', import.meta.url).pathname,
);

/** The live module. */
export const live: Live = await import(pathToFileURL(LIVE_PATH).href);
