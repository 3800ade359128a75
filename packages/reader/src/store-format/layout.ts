import { ReaderError } from '../errors.js';
import { explainInvalidIdentifier, isValidIdentifier } from './identifiers.js';

/** The directory of a store's turn journals (spec §4.4). */
export const TURN_JOURNAL_DIR = '_turn_journal';
/** The file name of a session's event log inside its session directory (spec §4.4). */
export const EVENT_LOG_FILE_NAME = 'events.jsonl';
/** The directory of run files and state documents (spec §4.4). */
export const SESSIONS_DIR = 'sessions';
/** The directory of state documents inside {@link SESSIONS_DIR} (spec §4.4). */
export const STATE_DIR = 'state';

/** A UTC calendar date as the run layout files it: four, two and two digits. */
export interface LayoutDate {
  readonly year: string;
  readonly month: string;
  readonly day: string;
}

/**
 * Where a journal or document lives in the recommended layout of a store (spec §4.4):
 * - `turn`: `_turn_journal/<sessionId>.jsonl`, or `_turn_journal/<sessionId>~<shard>.jsonl` for one writer process's shard;
 * - `event`: `<sessionId>/events.jsonl`;
 * - `run`: `sessions/YYYY/MM/DD/<runId>.jsonl`, dated by the run's `started_at` in UTC;
 * - `state`: `sessions/state/<sessionId>.json`.
 */
export type StoreLocation =
  | { readonly family: 'turn'; readonly sessionId: string; readonly shard?: string }
  | { readonly family: 'event'; readonly sessionId: string }
  | { readonly family: 'run'; readonly runId: string; readonly date: LayoutDate }
  | { readonly family: 'state'; readonly sessionId: string };

function requireId(id: string, what: string): string {
  if (!isValidIdentifier(id)) throw new ReaderError('invalid_identifier', `${what}: ${explainInvalidIdentifier(id)}`);
  return id;
}

function requireDigits(value: string, length: number, what: string): string {
  if (value.length !== length || !/^\d+$/.test(value))
    throw new ReaderError('invalid_option', `${what} must be ${length} digits, got ${JSON.stringify(value)}`);
  return value;
}

/**
 * The path of a location relative to the store root, as segments (join them with the platform's separator). Every
 * id must be a valid identifier (spec §4.3), so no segment can climb out of the store: an invalid one throws a
 * {@link ReaderError} with code `invalid_identifier` before any path exists (TJ-FAM-010).
 */
export function storePathSegments(location: StoreLocation): string[] {
  switch (location.family) {
    case 'turn': {
      const sessionId = requireId(location.sessionId, 'session id');
      const shard = location.shard === undefined ? undefined : requireId(location.shard, 'shard');
      return [TURN_JOURNAL_DIR, shard === undefined ? `${sessionId}.jsonl` : `${sessionId}~${shard}.jsonl`];
    }
    case 'event':
      return [requireId(location.sessionId, 'session id'), EVENT_LOG_FILE_NAME];
    case 'run':
      return [
        SESSIONS_DIR,
        requireDigits(location.date.year, 4, 'year'),
        requireDigits(location.date.month, 2, 'month'),
        requireDigits(location.date.day, 2, 'day'),
        `${requireId(location.runId, 'run id')}.jsonl`,
      ];
    case 'state':
      return [SESSIONS_DIR, STATE_DIR, `${requireId(location.sessionId, 'session id')}.json`];
  }
}

/**
 * Reads the location back from the last segments of a path: the inverse of {@link storePathSegments} for every
 * location it builds. Ids come back exactly as the name spells them, valid or not (a reader reports invalid ones,
 * TJ-FAM-012, TJ-FAM-013, and never uses them to build a path). Undefined for a path outside the recommended layout;
 * a file's records, not its place, decide its family (TJ-FAM-004), so this is a hint.
 */
export function safeParseStorePath(segments: readonly string[]): StoreLocation | undefined {
  const name = segments.at(-1);
  if (name === undefined) return undefined;
  const parent = segments.at(-2);
  if (name.endsWith('.json')) {
    if (parent !== STATE_DIR) return undefined;
    return { family: 'state', sessionId: name.slice(0, -'.json'.length) };
  }
  if (!name.endsWith('.jsonl')) return undefined;
  const stem = name.slice(0, -'.jsonl'.length);
  if (parent === TURN_JOURNAL_DIR) {
    const tilde = stem.indexOf('~');
    return tilde < 0
      ? { family: 'turn', sessionId: stem }
      : { family: 'turn', sessionId: stem.slice(0, tilde), shard: stem.slice(tilde + 1) };
  }
  if (name === EVENT_LOG_FILE_NAME && parent !== undefined) return { family: 'event', sessionId: parent };
  const dated = segments.slice(-5, -1);
  if (dated.length === 4 && dated[0] === SESSIONS_DIR && dated.slice(1).every((part) => /^\d+$/.test(part))) {
    const [, year, month, day] = dated as [string, string, string, string];
    return { family: 'run', runId: stem, date: { year, month, day } };
  }
  return undefined;
}
