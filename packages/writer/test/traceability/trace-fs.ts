import { type FileSystem, nodeFileSystem, type WriteOptions } from '../support/internals.js';

/** One call through a {@link TraceFileSystem}: the operation, the path it concerns and when it returned. */
export interface TracedCall {
  readonly op: keyof FileSystem;
  readonly path: string;
  /** For writes: the bytes written. */
  readonly bytes?: string;
  /** Sequence number taken when the call returned (resolution order). */
  readonly done: number;
}

/**
 * The real file system, recording every call with the path it concerns (descriptors are mapped back to paths), so a
 * test can check the order of writes, syncs and its own observations (`mark`). `before` runs before each call and
 * lets a test change the world at an exact point (another process writing, say).
 */
export class TraceFileSystem implements FileSystem {
  readonly calls: TracedCall[] = [];
  readonly marks: { readonly label: string; readonly at: number }[] = [];
  #tick = 0;
  readonly #paths = new Map<number, string>();
  before: (op: keyof FileSystem, path: string) => Promise<void> | void = () => undefined;

  /** Records an observation of the test (e.g. "the append resolved") in the same sequence as the calls. */
  mark(label: string): void {
    this.marks.push({ label, at: ++this.#tick });
  }

  async #run<T>(op: keyof FileSystem, path: string, call: () => Promise<T>, bytes?: string): Promise<T> {
    await this.before(op, path);
    const result = await call();
    this.calls.push({ op, path, done: ++this.#tick, ...(bytes === undefined ? {} : { bytes }) });
    return result;
  }
  #pathOf(fd: number): string {
    return this.#paths.get(fd) ?? `fd:${fd}`;
  }

  async open(path: string, mode: Parameters<FileSystem['open']>[1]): Promise<number> {
    const fd = await this.#run('open', path, () => nodeFileSystem.open(path, mode));
    this.#paths.set(fd, path);
    return fd;
  }
  write(
    fd: number,
    buffer: Uint8Array,
    offset: number,
    length: number,
    position: number,
    options?: WriteOptions,
  ): Promise<number> {
    const text = new TextDecoder().decode(buffer.subarray(offset, offset + length));
    // The options go through: dropping them would hide the single-trip small write from what the trace measures.
    return this.#run(
      'write',
      this.#pathOf(fd),
      () => nodeFileSystem.write(fd, buffer, offset, length, position, options),
      text,
    );
  }
  read(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): Promise<number> {
    return this.#run('read', this.#pathOf(fd), () => nodeFileSystem.read(fd, buffer, offset, length, position));
  }
  fdatasync(fd: number): Promise<void> {
    return this.#run('fdatasync', this.#pathOf(fd), () => nodeFileSystem.fdatasync(fd));
  }
  fsync(fd: number): Promise<void> {
    return this.#run('fsync', this.#pathOf(fd), () => nodeFileSystem.fsync(fd));
  }
  ftruncate(fd: number, length: number): Promise<void> {
    return this.#run('ftruncate', this.#pathOf(fd), () => nodeFileSystem.ftruncate(fd, length));
  }
  fstat(fd: number) {
    return this.#run('fstat', this.#pathOf(fd), () => nodeFileSystem.fstat(fd));
  }
  close(fd: number): Promise<void> {
    const path = this.#pathOf(fd);
    this.#paths.delete(fd);
    return this.#run('close', path, () => nodeFileSystem.close(fd));
  }
  stat(path: string) {
    return this.#run('stat', path, () => nodeFileSystem.stat(path));
  }
  mkdir(path: string): Promise<void> {
    return this.#run('mkdir', path, () => nodeFileSystem.mkdir(path));
  }
  fsyncDirectory(path: string): Promise<void> {
    return this.#run('fsyncDirectory', path, () => nodeFileSystem.fsyncDirectory(path));
  }
  rename(from: string, to: string): Promise<void> {
    return this.#run('rename', to, () => nodeFileSystem.rename(from, to));
  }
  link(existing: string, newPath: string): Promise<void> {
    return this.#run('link', newPath, () => nodeFileSystem.link(existing, newPath));
  }
  unlink(path: string): Promise<void> {
    return this.#run('unlink', path, () => nodeFileSystem.unlink(path));
  }
  readdir(path: string): Promise<string[]> {
    return this.#run('readdir', path, () => nodeFileSystem.readdir(path));
  }
  readFile(path: string): Promise<Uint8Array> {
    return this.#run('readFile', path, () => nodeFileSystem.readFile(path));
  }
}
