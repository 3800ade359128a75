/**
 * The writer under test: the repository's built `packages/writer/dist` (what users run), or another build named by
 * the environment variable `TJ_BENCH_WRITER` (the path of its `index.js`), to compare two versions on one machine.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

type Writer = typeof import('../../packages/writer/dist/index.js');

/** Path of the writer's `index.js`. */
export const WRITER_PATH = resolve(
  process.env.TJ_BENCH_WRITER ?? new URL('../../packages/writer/dist/index.js', import.meta.url).pathname,
);

/** The writer module. */
export const writer: Writer = await import(pathToFileURL(WRITER_PATH).href);
