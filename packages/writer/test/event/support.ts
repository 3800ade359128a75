import {
  checkStore,
  EventLogFold,
  type EventLogState,
  readJournal,
  recoverEventLog,
  replayEventLog,
} from '@turnjournal/reader';
import { readLinesOf } from '../support/space.js';

// The repository's one convention for property parameters (fixed seed and runs, TJ_PROPERTY_SEED / TJ_PROPERTY_RUNS).
export { propertyParameters } from '@turnjournal/test-support';

/** The reader's fold of the whole file, from its first byte. */
export async function fullFold(file: string): Promise<EventLogState> {
  const fold = new EventLogFold();
  for await (const batch of readJournal(file))
    for (const item of batch) if (item.kind === 'record') fold.add(item.record, { file });
  return fold.finish();
}

/** Every seq in the file, in file order, of the lines that parse. */
export function seqsOf(file: string): number[] {
  return readLinesOf(file)
    .toString('utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line).seq as number);
}

/** The records of the file, parsed. */
export function recordsOf(file: string): Record<string, unknown>[] {
  return readLinesOf(file)
    .toString('utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** What every reader entry point derives from the file, to compare with the writer's own state. */
export async function readerViews(file: string) {
  const full = await fullFold(file);
  const recovered = await recoverEventLog(file);
  const replay = await replayEventLog(file);
  const check = await checkStore([file]);
  return { full, recovered, replay, check };
}

/** Finding codes of `checkStore` with severity warn or error. */
export function seriousFindings(check: Awaited<ReturnType<typeof checkStore>>): string[] {
  return check.findings.filter((f) => f.severity !== 'info').map((f) => `${f.code}: ${f.message}`);
}

/** A clock that advances one millisecond per call from a fixed instant, so `ts` values are reproducible. */
export function steppingClock(start = Date.parse('2026-05-11T00:00:00.000Z')): () => number {
  let now = start;
  return () => now++;
}
