/**
 * The writer under test: the repository's built `packages/writer/dist` (what users run), or another build named by
 * the environment variable `TJ_BENCH_WRITER` (the path of its `index.js`), to compare two versions on one machine.
 * The main entry and the `file-system` entry (the low-level `AppendFile`) are merged into one module object; an older
 * build without the second entry exported everything from its index.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

type Writer = typeof import('../../packages/writer/dist/index.js') &
  typeof import('../../packages/writer/dist/file-system-entry.js');

/** Path of the writer's `index.js`. */
export const WRITER_PATH = resolve(
  process.env.TJ_BENCH_WRITER ?? new URL('../../packages/writer/dist/index.js', import.meta.url).pathname,
);

const fileSystemEntry = join(dirname(WRITER_PATH), 'file-system-entry.js');

/** The writer module. */
export const writer: Writer = {
  ...(await import(pathToFileURL(WRITER_PATH).href)),
  ...(existsSync(fileSystemEntry) ? await import(pathToFileURL(fileSystemEntry).href) : {}),
};
