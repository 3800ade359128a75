import type { FileSystem } from '@turnjournal/writer/file-system';

/** A {@link FileSystem} on a disk of limited room; see {@link fullDisk}. */
export interface FullDisk {
  /** The file system to hand the hub. */
  readonly fs: FileSystem;
  /** Bytes the files under the root take now (each file once, however many names it has). */
  used(): Promise<number>;
  /** Leaves `bytes` free from now on: the disk's size becomes what is used now plus `bytes`. */
  leaveFree(bytes: number): Promise<void>;
  /** Takes the limit away. */
  unlimited(): void;
  /** How many calls were refused with ENOSPC. */
  readonly refusals: number;
}

function noSpace(syscall: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`ENOSPC: no space left on device, ${syscall}`), { code: 'ENOSPC', syscall });
}

/**
 * `base` on a disk whose size can be set: a write or an extending `ftruncate` that would make the files under `root`
 * take more than that size is cut short where the room ends (as the kernel cuts a write), or refused with ENOSPC when
 * no byte of it fits. What the files take is measured on `base` (a walk of `root`, each inode once), so truncations,
 * removals and renames give room back as a real disk does.
 */
export function fullDisk(base: FileSystem, root: string): FullDisk {
  let size = Number.POSITIVE_INFINITY;
  let refusals = 0;
  const used = async (): Promise<number> => {
    const seen = new Set<number>();
    let total = 0;
    const walk = async (dir: string): Promise<void> => {
      let names: string[];
      try {
        names = await base.readdir(dir);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
        throw error;
      }
      for (const name of names) {
        const path = `${dir}/${name}`;
        let stat: Awaited<ReturnType<FileSystem['stat']>>;
        try {
          stat = await base.stat(path);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
          throw error;
        }
        if (stat.isDirectory) await walk(path);
        else if (!seen.has(stat.ino)) {
          seen.add(stat.ino);
          total += stat.size;
        }
      }
    };
    await walk(root);
    return total;
  };
  /** How many bytes of a change that ends at `end` in a file of `length` bytes fit; -1 when none do. */
  const room = async (length: number, start: number, end: number): Promise<number> => {
    if (!Number.isFinite(size) || end <= length) return end - start;
    const free = size - (await used());
    const fits = length + free - start;
    if (end - length <= free) return end - start;
    return fits > 0 ? fits : -1;
  };
  const fs: FileSystem = {
    ...(Object.fromEntries(
      Object.entries(base).map(([key, value]) => [key, typeof value === 'function' ? value.bind(base) : value]),
    ) as unknown as FileSystem),
    async write(fd, buffer, offset, length, position, options) {
      const fits = await room((await base.fstat(fd)).size, position, position + length);
      if (fits < 0) {
        refusals += 1;
        throw noSpace('write');
      }
      return base.write(fd, buffer, offset, Math.min(length, fits), position, options);
    },
    async ftruncate(fd, length) {
      const current = (await base.fstat(fd)).size;
      if ((await room(current, current, length)) < length - current) {
        refusals += 1;
        throw noSpace('ftruncate');
      }
      return base.ftruncate(fd, length);
    },
  };
  return {
    fs,
    used,
    async leaveFree(bytes) {
      size = (await used()) + bytes;
    },
    unlimited() {
      size = Number.POSITIVE_INFINITY;
    },
    get refusals() {
      return refusals;
    },
  };
}
