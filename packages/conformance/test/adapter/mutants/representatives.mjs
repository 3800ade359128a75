// A defect of feature `representatives` (adapter.md §4.2) for the mutation matrix: the reference reader's answer, but
// each turn's representative records chosen as a reader that keeps the first record it meets would choose them.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { referenceImplementation } from '@turnjournal/conformance';

const TURN_EVENTS = new Set(['submitted', 'worker_started', 'assistant_started', 'completed', 'interrupted']);

/** The turn journal files below `path`, in the sorted order a simple reader lists them. */
function turnJournals(path) {
  if (!statSync(path).isDirectory()) return path.endsWith('.jsonl') ? [path] : [];
  return readdirSync(path, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .flatMap((entry) => {
      const child = join(path, entry.name);
      if (entry.isDirectory()) return turnJournals(child);
      return entry.name.endsWith('.jsonl') && basename(path) === '_turn_journal' ? [child] : [];
    });
}

/** Session → turn → event name → the first record of that name read, files in name order, lines in file order. */
function firstRecords(paths) {
  const out = {};
  for (const file of paths.flatMap(turnJournals)) {
    const sessionId = basename(file, '.jsonl').split('~')[0];
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      let record;
      try {
        record = JSON.parse(line);
      } catch (error) {
        if (error instanceof SyntaxError) continue; // a damaged or empty line holds no record
        throw error;
      }
      if (typeof record?.turn_id !== 'string' || !TURN_EVENTS.has(record.event)) continue;
      out[sessionId] ??= {};
      out[sessionId][record.turn_id] ??= {};
      out[sessionId][record.turn_id][record.event] ??= record;
    }
  }
  return out;
}

/** TJ-DERIVE-013: the first record read represents an event name, not the one with the smallest bytes. */
export const representativeDefects = {
  'first-record-represents': {
    read: async (paths, mode, audit, maxLineBytes, representatives) => {
      const result = await referenceImplementation.read(paths, mode, audit, maxLineBytes, representatives);
      return representatives === true ? { ...result, representatives: firstRecords(paths) } : result;
    },
  },
};
