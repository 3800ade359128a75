import { join } from 'node:path';
import type { RecordStore } from '@turnjournal/reader/record-store';
import type { Durability } from '../append/append-file.js';
import { JournalWriteError, WriterError } from '../errors.js';
import type { EventLog } from '../event/event-log.js';
import { openEventLog } from '../event/open-event-log.js';
import { afterFailure } from '../fs/after-failure.js';
import { type FileSystem, nodeFileSystem } from '../fs/file-system.js';
import type { AcquireLockOptions } from '../fs/lock.js';
import { type SweepOptions, type SweepReport, sweepTurnJournals } from '../retention/sweep-turn-journals.js';
import { openTurnJournal } from '../turn/open-turn-journal.js';
import type { TurnJournal } from '../turn/turn-journal.js';

/** The directory of a store's turn journals (spec §4.4). */
const TURN_JOURNAL_DIR = '_turn_journal';

/** Options of {@link openSessionJournals}. */
export interface OpenSessionJournalsOptions {
  /** The store root (a file store). */
  readonly root?: string;
  /**
   * A record store (spec §19) instead of `root`: the journals are its turn journal (shard-less) and event log of the
   * session. `fs` and `lock` are then the store's business.
   */
  readonly store?: RecordStore;
  /** The session, a valid identifier (spec §4.3). */
  readonly sessionId: string;
  /** Durability of the event log; `every` by default (a live session uses `none` and syncs per record). */
  readonly eventDurability?: Durability;
  /** Durability of the turn journal; `group` by default. */
  readonly turnDurability?: 'every' | 'group';
  /** The file-system layer; the real one by default. */
  readonly fs?: FileSystem;
  /** Wall clock in epoch milliseconds, for both writers; `Date.now` by default. */
  readonly clock?: () => number;
  /** Records between two automatic checkpoints of the event log. */
  readonly checkpointInterval?: number;
  /** Options of the lock acquisitions. */
  readonly lock?: AcquireLockOptions;
}

/** The two journals of one session, opened at their recommended places in a store. */
export interface SessionJournals {
  /** The session's event log, `<root>/<sessionId>/events.jsonl`. */
  readonly events: EventLog;
  /** The session's turn journal, `<root>/_turn_journal/<sessionId>.jsonl`. */
  readonly turns: TurnJournal;
  /** Closes both. */
  close(): Promise<void>;
}

/**
 * Opens a session's turn journal and event log at the layout of spec §4.4, so that a caller that owns a session (a
 * live-session hub) never builds a path itself: the layout, like everything else about files, stays in the writer.
 */
export async function openSessionJournals(options: OpenSessionJournalsOptions): Promise<SessionJournals> {
  const common = {
    ...(options.fs === undefined ? {} : { fs: options.fs }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.lock === undefined ? {} : { lock: options.lock }),
  };
  const { root, store } = options;
  if ((root === undefined) === (store === undefined))
    throw new WriterError('invalid_option', 'openSessionJournals needs exactly one of `root` and `store`');
  const turns = await openTurnJournal({
    ...(store === undefined ? { dir: join(root as string, TURN_JOURNAL_DIR) } : { store }),
    sessionId: options.sessionId,
    durability: options.turnDurability ?? 'group',
    ...common,
  });
  try {
    const events = await openEventLog({
      ...(store === undefined ? { root: root as string } : { store }),
      sessionId: options.sessionId,
      durability: options.eventDurability ?? 'every',
      ...(options.checkpointInterval === undefined ? {} : { checkpointInterval: options.checkpointInterval }),
      ...common,
    });
    return {
      events,
      turns,
      close: async () => {
        await Promise.allSettled([events.close(), turns.close()]).then((results) => {
          for (const result of results) if (result.status === 'rejected') throw result.reason;
        });
      },
    };
  } catch (error) {
    throw await afterFailure(error, () => turns.close());
  }
}

/**
 * Runs the retention sweep (spec §14.1) over the turn journals of a store, at their recommended place. A store with no
 * turn-journal directory yet (no session was ever opened) has nothing to sweep: the report lists no session.
 */
export async function sweepStoreTurnJournals(root: string, options: SweepOptions = {}): Promise<SweepReport> {
  const dir = join(root, TURN_JOURNAL_DIR);
  const fs = options.fs ?? nodeFileSystem;
  try {
    await fs.stat(dir);
  } catch (error) {
    // Only a directory that does not exist means "nothing to sweep"; any other failure of the stat fails the sweep.
    if ((error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT')
      return { dir, sessions: [], dryRun: options.dryRun ?? false };
    throw new JournalWriteError(dir, 'stat', error);
  }
  return sweepTurnJournals(dir, options);
}
