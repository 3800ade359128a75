import { existsSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { discoverStore } from '@turnjournal/reader';
import type { RecordStore } from '@turnjournal/reader/record-store';
import { copyStore, type StoreCopy } from '@turnjournal/writer';
import { openFileRecordStore } from '@turnjournal/writer/file-store';
import { ConformanceError } from '../errors.js';
import { isStoreUrl, openStoreUrl, withoutPassword } from './store-target.js';
import { textLines } from './terminal-text.js';

/** What `export` or `import` copied, and between which stores (as reports name them: no password). */
export interface TransferResult {
  readonly from: string;
  readonly to: string;
  readonly copy: StoreCopy;
}

/**
 * `turnjournal export <store URL> <dir>` and `import <dir> <store URL>`: every journal and document of one store copied
 * byte for byte into the other (copyStore, spec §19.1), a directory being a file store at its root. The directory of
 * an export must be empty or new; an import refuses a directory holding files outside the store layout (spec §4.4),
 * which it could not copy, rather than leave them behind unsaid.
 */
export async function transferCommand(
  command: 'export' | 'import',
  targets: readonly string[],
): Promise<TransferResult> {
  if (targets.length !== 2)
    throw new ConformanceError(
      'usage',
      command === 'export'
        ? 'export: give a store URL and a directory: turnjournal export postgres://…?store=<name> <dir>'
        : 'import: give a directory and a store URL: turnjournal import <dir> postgres://…?store=<name>',
    );
  const [first, second] = targets as [string, string];
  const [url, dir] = command === 'export' ? [first, second] : [second, first];
  if (!isStoreUrl(url)) throw new ConformanceError('usage', `${command}: ${url} is not a store URL (postgres://…)`);
  if (isStoreUrl(dir)) throw new ConformanceError('usage', `${command}: ${dir} must be a directory, not a URL`);
  if (command === 'export' && existsSync(dir) && readdirSync(dir).length > 0)
    throw new ConformanceError('usage', `export: ${dir} is not empty: export into a new or empty directory`);
  if (command === 'import') refuseUncopiable(dir);
  const { store } = await openStoreUrl(command, url);
  try {
    const files: RecordStore = openFileRecordStore({ root: resolve(dir) });
    const [from, to] = command === 'export' ? [store, files] : [files, store];
    const copy = await copyStore(from, to);
    const shown = withoutPassword(url);
    return command === 'export' ? { from: shown, to: dir, copy } : { from: dir, to: shown, copy };
  } finally {
    await store.close();
  }
}

/** Refuses an import of a directory that holds what a file store does not list: it would be left behind silently. */
function refuseUncopiable(dir: string): void {
  if (!existsSync(dir)) throw new ConformanceError('usage', `import: no such directory: ${dir}`);
  const found = discoverStore([dir]);
  const outside = found.files.filter((file) => file.hint.family === undefined).map((file) => file.path);
  const problems = [...outside, ...found.findings.map((finding) => `${finding.file ?? dir} (${finding.code})`)];
  if (problems.length > 0)
    throw new ConformanceError(
      'usage',
      `import: ${problems.length} file(s) under ${dir} are outside the store layout (spec §4.4) or unreadable and would not be copied: ${problems.slice(0, 3).join(', ')}${problems.length > 3 ? ', …' : ''}`,
    );
}

/** Text output of `export` and `import`. */
export function formatTransfer(command: 'export' | 'import', result: TransferResult): string {
  const journals = result.copy.entries.filter((entry) => entry.location.family !== 'state');
  const documents = result.copy.entries.length - journals.length;
  const bytes = result.copy.entries.reduce((sum, entry) => sum + entry.bytes, 0);
  return textLines([
    `${command === 'export' ? 'exported' : 'imported'} ${journals.length} journal(s) and ${documents} document(s), ${bytes} bytes, from ${result.from} to ${result.to}`,
  ]);
}
