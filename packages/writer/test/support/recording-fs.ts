import { FILE_SYSTEM_OPERATIONS, type FileSystem, nodeFileSystem, type WriteOptions } from '../support/internals.js';

/** One write as a {@link recordingFileSystem} saw it. */
export interface RecordedWrite {
  /** The path the descriptor was opened with. */
  readonly path: string;
  /** The options the writer passed (`awaited` on every append). */
  readonly options: WriteOptions | undefined;
}

/** The real file system, counting how often each descriptor is closed and recording every write's options. */
export interface RecordingFileSystem extends FileSystem {
  /** Closes per path (the path the descriptor was opened with), counted per call, even a failing one. */
  readonly closes: Map<string, number>;
  /** Every write, in call order. */
  readonly writes: RecordedWrite[];
}

/** See {@link RecordingFileSystem}. */
export function recordingFileSystem(base: FileSystem = nodeFileSystem): RecordingFileSystem {
  const paths = new Map<number, string>();
  const closes = new Map<string, number>();
  const writes: RecordedWrite[] = [];
  const layer = Object.fromEntries(
    FILE_SYSTEM_OPERATIONS.map((op) => [
      op,
      (...args: unknown[]) => (base[op] as (...a: unknown[]) => unknown)(...args),
    ]),
  ) as unknown as FileSystem;
  return {
    ...layer,
    closes,
    writes,
    async open(path, mode) {
      const fd = await base.open(path, mode);
      paths.set(fd, path);
      return fd;
    },
    write(fd, buffer, offset, length, position, options) {
      writes.push({ path: paths.get(fd) ?? `fd:${fd}`, options });
      return base.write(fd, buffer, offset, length, position, options);
    },
    close(fd) {
      const path = paths.get(fd) ?? `fd:${fd}`;
      closes.set(path, (closes.get(path) ?? 0) + 1);
      return base.close(fd);
    },
  };
}
