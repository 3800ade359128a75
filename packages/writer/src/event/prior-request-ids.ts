import { type JournalSource, scanEventRuns } from '@turnjournal/reader';

/**
 * The `request_id`s of every `chat.started` before `end`: the part of an event log that the opening recovery (which
 * folds only the tail, spec §15.2) does not read. The writer refuses a second `chat.started` for any of them
 * (TJ-EVENT-010 holds across reopen); the scan parses only the lines that can be run records, so its cost is one
 * sequential read of that part at memory-search speed.
 */
export async function readPriorRequestIds(source: JournalSource, end: number): Promise<Set<string>> {
  if (end <= 0) return new Set();
  const runs = await scanEventRuns({ source, end });
  return new Set(runs.keys());
}
