import { safeParseLockHolder } from '@turnjournal/reader/store-format';
import type { FileStat, SynchronousReadFile, SynchronousStat } from './file-system.js';
import { isSettled } from './settled-change.js';

/** What a holder knows of the lock file it created: its inode and the token it wrote. */
export interface LockIdentity {
  readonly ino: number;
  readonly token: string;
}

/** Whether a lock file is still its holder's: `held`, `replaced` (another holder's lock is there) or `gone`. */
export type LockFileState = 'held' | 'replaced' | 'gone';

/**
 * Looks, again and again, at whether the lock file at `path` is still the one `identity` created (TJ-DUR-040). An
 * inode number alone cannot tell: a file system reuses a freed one at once, so the lock a taker creates right after
 * removing this holder's often has its number. A lock with the same inode is read, and is this holder's only when it
 * holds its token.
 *
 * Once read and found this holder's, the file is not read again while its change time stays what it was and was
 * settled then (see `isSettled`): a file created later, whatever its inode, has a later change time. Reading it at
 * every look made 64 sessions syncing in a changing directory markedly slower (bench/results/history.md,
 * "sessions-64 and the lock check"). The holder's own renewals move the change time, so the next look reads it once.
 * Errors of the `stat` or the read other than ENOENT are thrown (or rejected with).
 */
export class LockFileWatch {
  /** The lock file's path. */
  readonly path: string;
  readonly #identity: LockIdentity;
  /** The change time of the file when last read and found this holder's, if it was settled then. */
  #seenCtimeMs: number | undefined;

  constructor(path: string, identity: LockIdentity) {
    this.path = path;
    this.#identity = identity;
  }

  /** The lock's state through a file system's asynchronous `stat` (or its synchronous twin) and `readFile`. */
  async state(
    stat: (path: string) => FileStat | Promise<FileStat>,
    readFile: (path: string) => Promise<Uint8Array>,
  ): Promise<LockFileState> {
    const readAt = Date.now();
    try {
      const found = await stat(this.path);
      return this.#unread(found) ?? this.#judge(found, readAt, await readFile(this.path));
    } catch (error) {
      return goneOrThrow(error);
    }
  }

  /** The same through a file system's synchronous twins, without a promise. */
  stateNow(now: { readonly stat: SynchronousStat; readonly readFile: SynchronousReadFile }): LockFileState {
    const readAt = Date.now();
    try {
      const found = now.stat(this.path);
      return this.#unread(found) ?? this.#judge(found, readAt, now.readFile(this.path));
    } catch (error) {
      return goneOrThrow(error);
    }
  }

  /** The answer the `stat` alone gives, or undefined when the file must be read. */
  #unread(found: FileStat): LockFileState | undefined {
    if (found.ino !== this.#identity.ino) return 'replaced';
    if (this.#seenCtimeMs !== undefined && found.ctimeMs === this.#seenCtimeMs) return 'held';
    return undefined;
  }

  /** The answer of the file's text, read after `found` was (whose `stat` started no earlier than `readAt`). */
  #judge(found: FileStat, readAt: number, text: Uint8Array): LockFileState {
    const held = safeParseLockHolder(new TextDecoder().decode(text))?.token === this.#identity.token;
    this.#seenCtimeMs = held && isSettled(found.ctimeMs, readAt) ? found.ctimeMs : undefined;
    return held ? 'held' : 'replaced';
  }
}

function goneOrThrow(error: unknown): 'gone' {
  if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
  throw error;
}
