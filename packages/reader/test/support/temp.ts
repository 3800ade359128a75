import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type JournalItem, type ReadJournalOptions, readJournal } from '../../src/index.js';

/** Writes bytes to a new temporary file and returns its path. */
export function tempFile(content: string | Uint8Array, name = 'journal.jsonl'): string {
  const path = join(mkdtempSync(join(tmpdir(), 'tj-reader-')), name);
  writeFileSync(path, content);
  return path;
}

/** Reads a whole journal into one list of items. */
export async function readAll(path: string, options: ReadJournalOptions = {}): Promise<JournalItem[]> {
  const items: JournalItem[] = [];
  for await (const batch of readJournal(path, options)) items.push(...batch);
  return items;
}

/** The records' values and the findings' `code@line`, for compact assertions. */
export function summary(items: readonly JournalItem[]): { records: unknown[]; findings: string[] } {
  return {
    records: items.filter((i) => i.kind === 'record').map((i) => (i.kind === 'record' ? i.record.value : undefined)),
    findings: items
      .filter((i) => i.kind === 'finding')
      .map((i) => (i.kind === 'finding' ? `${i.finding.code}@${i.finding.line ?? '-'}` : '')),
  };
}

/** Items as plain JSON (bytes as hex), so reads that produced equal content in different buffers compare equal. */
export function comparable(items: readonly JournalItem[]): unknown[] {
  return items.map((item) =>
    item.kind === 'record' ? { ...item.record, bytes: Buffer.from(item.record.bytes).toString('hex') } : item.finding,
  );
}
