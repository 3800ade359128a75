import { SESSIONS_DIR, TURN_JOURNAL_DIR } from '@turnjournal/reader/store-format';
import { LiveError } from './errors.js';

/**
 * Names of the store's own directories in the layout of spec §4.4, lower-cased: a session of that name would put its
 * event log among the store's other files (`_turn_journal/events.jsonl` is also the turn journal of session
 * `events`). Compared without case, because a file system may fold it.
 */
const RESERVED_NAMES: ReadonlySet<string> = new Set([TURN_JOURNAL_DIR, SESSIONS_DIR].map((name) => name.toLowerCase()));

/**
 * The refusal of a session id the layout reserves (TJ-LIVE-037): a name of the store's own directories, in any case,
 * or a name starting with `.`, the form of the reserved auxiliary files of spec §4.5; null for a usable id.
 */
export function reservedSessionIdRefusal(sessionId: string): LiveError | null {
  if (!RESERVED_NAMES.has(sessionId.toLowerCase()) && !sessionId.startsWith('.')) return null;
  return new LiveError(
    'reserved_session_id',
    `the session id ${JSON.stringify(sessionId)} is reserved: the store uses that name for its own files (TJ-LIVE-037); choose another id`,
  );
}
