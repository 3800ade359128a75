import { readJournal } from '@turnjournal/reader';
import type { Finding } from '@turnjournal/schema';

/** What the reference reader sees in one journal file. */
export interface JournalContents {
  /** The records, in file order, with where each line starts. */
  readonly records: readonly { readonly offset: number; readonly value: Record<string, unknown> }[];
  /** Every framing and record finding, in file order. */
  readonly findings: readonly Finding[];
}

/** Reads a whole journal file with the reference reader (`readJournal`, tolerant mode). */
export async function readAll(path: string): Promise<JournalContents> {
  const records: { offset: number; value: Record<string, unknown> }[] = [];
  const findings: Finding[] = [];
  for await (const batch of readJournal(path))
    for (const item of batch)
      if (item.kind === 'record') records.push({ offset: item.record.offset, value: item.record.value });
      else findings.push(item.finding);
  return { records, findings };
}

/** The content of record n of the crash tests: `m<n>:` then a padding whose length depends on n (as in crash-child.mjs). */
export function contentOf(n: number, pad: number): string {
  return `m${n}:${'x'.repeat(pad > 0 ? (n * 7919) % pad : 0)}`;
}

/** The number n of a record made by {@link contentOf}, or undefined. */
export function numberOf(content: unknown): number | undefined {
  const match = typeof content === 'string' ? /^m(\d+):x*$/.exec(content) : null;
  return match === null ? undefined : Number(match[1]);
}

/** Raw record n of the crash tests: an event-log record (spec §6) with seq n+1 (as in crash-child.mjs). */
export function rawRecord(n: number, pad: number): Record<string, unknown> {
  return {
    seq: n + 1,
    ts: '2026-01-01T00:00:00.000Z',
    type: 'message_append',
    payload: { message: { role: 'user', content: contentOf(n, pad) } },
  };
}

/** An event record with seq n+1 whose message content is `text` (for tests that need specific bytes in a record). */
export function eventRecord(n: number, text = `m${n}:`): Record<string, unknown> {
  return {
    seq: n + 1,
    ts: '2026-01-01T00:00:00.000Z',
    type: 'message_append',
    payload: { message: { role: 'user', content: text } },
  };
}
