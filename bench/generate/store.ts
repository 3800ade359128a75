import { join } from 'node:path';
import { Prng } from './prng.js';
import { writeTurnJournal } from './turn-journal.js';

/** Options of {@link writeStore}. */
export interface StoreOptions {
  /** Number of sessions (one turn journal each). */
  readonly sessions: number;
  /** Seed of the PRNG. */
  readonly seed: number;
}

/** What was written. */
export interface StoreStats {
  readonly files: number;
  readonly bytes: number;
  readonly turns: number;
  readonly lines: number;
}

/**
 * Writes a store root with `sessions` turn journals at `<root>/_turn_journal/<session_id>.jsonl` (spec §4.4), as a
 * server finds it at startup after a crash: 1 to 40 turns per session (most sessions short), about 1 % of sessions
 * with their last turn pending and 0.5 % with a torn tail.
 */
export function writeStore(root: string, options: StoreOptions): StoreStats {
  const prng = new Prng(options.seed);
  let bytes = 0;
  let turns = 0;
  let lines = 0;
  for (let i = 0; i < options.sessions; i += 1) {
    const sessionId = `conv-${prng.hex(12)}`;
    // Geometric-ish: many short sessions, a few long ones (mean about 6 turns).
    let count = 1;
    while (count < 40 && prng.chance(0.83)) count += 1;
    const stats = writeTurnJournal(join(root, '_turn_journal', `${sessionId}.jsonl`), {
      sessionId,
      seed: prng.uint32(),
      turns: count,
      startAt: 1778000000 + prng.int(0, 400000),
      pendingLast: 0.01,
      tornTail: 0.005,
    });
    bytes += stats.bytes;
    turns += stats.turns;
    lines += stats.lines;
  }
  return { files: options.sessions, bytes, turns, lines };
}
