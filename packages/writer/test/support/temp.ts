import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkStore } from '@turnjournal/reader';

/** A new empty temporary directory. */
export function tempDir(prefix = 'tj-writer-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** The findings `turnjournal check` reports for these paths, as `code` strings. */
export async function findingCodes(paths: readonly string[]): Promise<string[]> {
  const check = await checkStore(paths);
  return check.findings.map((finding) => finding.code);
}
