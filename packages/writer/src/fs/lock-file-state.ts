import { safeParseLockHolder } from '@turnjournal/reader/store-format';
import type { FileStat, FileSystem } from './file-system.js';

/** What a holder knows of the lock file it created: its inode and the token it wrote. */
export interface LockIdentity {
  readonly ino: number;
  readonly token: string;
}

/**
 * Whether the lock file at `path` is still the one `identity` created (TJ-DUR-040): `held`, `replaced` (another
 * holder's lock is there) or `gone`. An inode number alone cannot tell: a file system reuses a freed one at once, so
 * the lock a taker creates right after removing this holder's often has its number. A lock with the same inode is
 * read, and is this holder's only when it holds its token. Other errors of the `stat` or the read reject.
 */
export async function lockFileState(
  fs: FileSystem,
  path: string,
  identity: LockIdentity,
  stat: (path: string) => FileStat | Promise<FileStat>,
): Promise<'held' | 'replaced' | 'gone'> {
  let ino: number;
  let text: Uint8Array;
  try {
    ino = (await stat(path)).ino;
    if (ino !== identity.ino) return 'replaced';
    text = await fs.readFile(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
    throw error;
  }
  return safeParseLockHolder(new TextDecoder().decode(text))?.token === identity.token ? 'held' : 'replaced';
}
