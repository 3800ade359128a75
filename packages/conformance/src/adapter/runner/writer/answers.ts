import { existsSync, readFileSync } from 'node:fs';
import type { AdapterProcess } from '../../process.js';
import { answerCode } from './context.js';
import { withoutSpace } from './support.js';

// What the checks of the writer's own decisions (features lifecycle and live) read back: a journal's bytes and
// records, and the answers to requests that must succeed or must be refused.

/** The bytes of `file`'s lines, without pre-allocated space after them (spec §3.8); empty when it does not exist. */
export function bytesOf(file: string): Buffer {
  return existsSync(file) ? withoutSpace(readFileSync(file)) : Buffer.alloc(0);
}

/**
 * The records of a journal's bytes as the harness reads them back. A line that does not parse as JSON (a torn tail left
 * in place, damage) is added to `failures`: the writer's journal must hold whole records only.
 */
export function parseRecords(bytes: Buffer, failures: string[]): Record<string, unknown>[] {
  const records: Record<string, unknown>[] = [];
  for (const [index, line] of bytes.toString('utf8').split('\n').entries()) {
    if (line.length === 0) continue;
    try {
      records.push(JSON.parse(line) as Record<string, unknown>);
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      failures.push(`line ${index + 1} of the journal is not a JSON record: ${JSON.stringify(line.slice(0, 80))}`);
    }
  }
  return records;
}

/** The records of the JSONL file `file` ({@link parseRecords} of its bytes). */
export function recordsOf(file: string, failures: string[]): Record<string, unknown>[] {
  return parseRecords(bytesOf(file), failures);
}

/** Where a check reads a journal's bytes: the file at a path, or a reader of its bytes (feature `store-lines`). */
export type JournalSource = string | (() => Promise<Buffer>);

const bytesFrom = (source: JournalSource): Promise<Buffer> =>
  typeof source === 'string' ? Promise.resolve(bytesOf(source)) : source();

/**
 * Sends a request that the spec says must be refused, and checks that it is — answered `refused`, or `expected` — and
 * that the journal did not change.
 */
export async function expectRefused(
  process: AdapterProcess,
  journal: JournalSource,
  op: string,
  params: Record<string, unknown>,
  why: string,
  failures: string[],
  expected: 'refused' | 'bad_request' = 'refused',
): Promise<void> {
  const before = await bytesFrom(journal);
  const code = await answerCode(process.request(op, params));
  if (code !== expected) failures.push(`${why}: answered ${code}, not ${expected}`);
  const after = await bytesFrom(journal);
  if (!after.equals(before)) failures.push(`${why}: the journal changed (${after.length - before.length} byte(s))`);
}

/** Sends a request that must succeed; a failure is recorded. Resolves with the result, or null. */
export async function expectOk(
  process: AdapterProcess,
  op: string,
  params: Record<string, unknown>,
  what: string,
  failures: string[],
): Promise<Record<string, unknown> | null> {
  try {
    return (await process.request(op, params)) as Record<string, unknown>;
  } catch (error) {
    failures.push(`${what}: ${error instanceof Error ? error.message : String(error)}`);
    return null;
  }
}
