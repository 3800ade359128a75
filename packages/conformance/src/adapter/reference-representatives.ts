import { closeSync, openSync, readSync } from 'node:fs';
import { checkStore, type RecordLocation } from '@turnjournal/reader';
import type { Representatives } from './protocol.js';

/**
 * Each derived turn's representative record of every event name it has (spec §10.4, TJ-DERIVE-013), read back whole
 * from where the reference reader located it: what the reference adapter answers to a `read` with `representatives`
 * and what `reader/representatives` holds an adapter's answer to.
 */
export async function referenceRepresentatives(
  paths: readonly string[],
  options: { readonly mode?: 'tolerant' | 'prefix' | 'strict'; readonly maxLineBytes?: number } = {},
): Promise<Representatives> {
  const check = await checkStore(paths, {
    mode: options.mode ?? 'tolerant',
    ...(options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes }),
  });
  const representatives: Representatives = {};
  for (const session of check.sessions) {
    const turns: Representatives[string] = {};
    for (const turn of session.turns) {
      // `events` is built anew on each access (DerivedTurn.events): read it once.
      const events = Object.entries(turn.events);
      turns[turn.turnId] = Object.fromEntries(events.map(([name, record]) => [name, recordAt(record.location)]));
    }
    representatives[session.sessionId] = turns;
  }
  return representatives;
}

/** The record at `location`, parsed: the reader keeps where a representative is, not the record. */
function recordAt(location: RecordLocation): Record<string, unknown> {
  const bytes = Buffer.alloc(location.length);
  const fd = openSync(location.file, 'r');
  try {
    readSync(fd, bytes, 0, location.length, location.offset);
  } finally {
    closeSync(fd);
  }
  return JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
}
