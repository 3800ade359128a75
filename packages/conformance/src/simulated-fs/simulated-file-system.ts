// Over 450 lines on purpose: this is one model — what a file system keeps, loses, tears or reorders at a crash —
// and its durable state, volatile state and crash rules must be read together to be checked against each other.
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { FILE_SYSTEM_OPERATIONS, type FileStat, type FileSystem, type OpenMode } from '@turnjournal/writer/file-system';
import { Random } from '../adapter/random.js';

/**
 * A random source in [0, 1), like `Math.random`. The simulator draws every crash decision from it, so a seeded source
 * makes a crash image reproducible from its seed (TJ-CONF-010).
 */
export type RandomSource = () => number;

/** A seeded {@link RandomSource} (the kit's one generator, `Random`): the same seed gives the same crash images. */
export function seededRandom(seed: number): RandomSource {
  const random = new Random(seed);
  return () => random.next();
}

/** The name of one call of the writer's `FileSystem` (of `@turnjournal/writer`) layer. */
export type SimulatedOperation = Exclude<keyof FileSystem, 'touch' | 'hostPaths'>;

/** Every call of the layer, in the order of the interface. */
export const SIMULATED_OPERATIONS: readonly SimulatedOperation[] = FILE_SYSTEM_OPERATIONS;

/** One planned failure of {@link SimulatedFileSystem.inject}. */
export interface SimulatedFault {
  /** The operation that fails; `*` counts calls of every operation. */
  readonly op: SimulatedOperation | '*';
  /** Which matching call fails, 1-based, counted from the injection; 1 by default. */
  readonly nth?: number;
  /** Only calls whose path (for descriptor calls: the path it was opened with) ends with this string count. */
  readonly path?: string;
  /** The errno code; `EIO` by default (`ENOSPC` is the other usual one). */
  readonly errno?: string;
}

/** What {@link SimulatedFileSystem.crash} did to the unsynced state: the decisions, for a counterexample report. */
export interface CrashReport {
  /** Per file path (in the pre-crash image): what became of each unsynced data operation. */
  readonly data: Readonly<Record<string, readonly string[]>>;
  /** Per directory path: what became of each unsynced entry operation. */
  readonly entries: Readonly<Record<string, readonly string[]>>;
}

/** Thrown by every call once a planned crash point ({@link SimulatedFileSystem.crashAtCall}) has passed, and by stale views. */
export class SimulatedCrashError extends Error {
  /** An errno-like code, so that callers that branch on `code` see a failure they do not handle specially. */
  readonly code = 'ESIMCRASH';
  /** @param reason why the call could not run. */
  constructor(reason: string) {
    super(`simulated crash: ${reason}`);
    this.name = 'SimulatedCrashError';
  }
}

/** One unsynced change of a file's bytes. */
type DataOp =
  | { readonly kind: 'write'; readonly position: number; readonly bytes: Uint8Array }
  | { readonly kind: 'truncate'; readonly length: number };

interface FileNode {
  readonly kind: 'file';
  readonly ino: number;
  /** The bytes that survive any crash. */
  durable: Uint8Array;
  /** What a reader sees now: `durable` with `log` applied in order. */
  current: Uint8Array;
  /** Changes since the last fsync/fdatasync, in call order. */
  log: DataOp[];
}

/** One unsynced change of a directory entry: `name` now names `ino`, or (null) nothing. */
interface EntryOp {
  readonly name: string;
  readonly ino: number | null;
  /** Ops of one rename inside one directory share a group and survive or vanish together. */
  readonly group: number;
}

interface DirNode {
  readonly kind: 'dir';
  readonly ino: number;
  /** The entries that survive any crash. */
  durable: Map<string, number>;
  /** The entries a reader sees now. */
  current: Map<string, number>;
  /** Entry changes since the last fsyncDirectory, in call order. */
  log: EntryOp[];
}

type Node = FileNode | DirNode;

interface Descriptor {
  readonly ino: number;
  readonly path: string;
  readonly writable: boolean;
  readonly boot: number;
}

const ROOT_INO = 1;

/** An errno error shaped like the ones Node.js raises (`code`, `syscall`, `path`). */
function errno(code: string, syscall: string, path: string, detail = ''): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`${code}: ${detail || 'simulated'}, ${syscall} '${path}'`);
  error.code = code;
  error.syscall = syscall;
  error.path = path;
  return error;
}

function applyData(content: Uint8Array, op: DataOp): Uint8Array {
  if (op.kind === 'truncate') {
    if (op.length <= content.length) return content.slice(0, op.length);
    const grown = new Uint8Array(op.length);
    grown.set(content);
    return grown;
  }
  const end = op.position + op.bytes.length;
  const out = end > content.length ? new Uint8Array(end) : content.slice();
  if (end > content.length) out.set(content);
  out.set(op.bytes, op.position);
  return out;
}

/**
 * An in-memory POSIX-like file system with explicit durability, for crash testing writers that go through the
 * `FileSystem` (of `@turnjournal/writer`) layer (TJ-CONF-009, TJ-DUR-024). It is the contract the property suites test writers against:
 *
 * **State.** Every file has its *durable* bytes and a log of *unsynced* data operations (writes and truncations, in
 * call order); what a reader sees is the durable bytes with the log applied. Every directory has its *durable*
 * entries and a log of unsynced entry operations (create, mkdir, link, rename, unlink, each recorded as "name → inode"
 * or "name removed"). Files are inodes: a hard link is a second entry naming the same inode, sharing its bytes.
 *
 * **Syncs.** `fsync` and `fdatasync` make a file's bytes (and its size, which counts as data) durable: the log is
 * folded into the durable bytes. The model has no other metadata, so the two are the same here. Neither makes the
 * file's *name* durable: only `fsyncDirectory` of the directory holding the entry does, by folding that directory's
 * entry log into its durable entries (POSIX: a new file needs its directory fsynced, TJ-DUR-007).
 *
 * **Crash.** {@link SimulatedFileSystem.crash} computes the post-crash image from the durable state plus an arbitrary
 * part of the unsynced state, every choice drawn from the seeded random source:
 * - each unsynced data operation of each file is independently *dropped*, *kept*, *kept as a prefix* (a random number
 *   of its first bytes: a torn write), or *zeroed* (its range exists, filled with NUL bytes: the size reached the disk
 *   but the data did not); the survivors are applied over the durable bytes in a random order (writeback reorders
 *   pages), and a range past the end of the file is filled with NUL bytes;
 * - each unsynced entry operation of each directory is independently kept or dropped (a rename inside one directory
 *   is kept or dropped as a whole; across directories its two halves are decided separately), the survivors applied
 *   in call order: a file created without a directory fsync may vanish, an unsynced rename may be undone, an unsynced
 *   unlink may come back;
 * - a file or directory is in the image only when a chain of surviving entries leads to it from the root.
 *
 * {@link SimulatedFileSystem.kill} is the death of the process alone (SIGKILL): descriptors and views die, nothing
 * is lost, and unsynced state stays unsynced for a later crash.
 *
 * After a crash every descriptor is invalid (EBADF), views taken with {@link SimulatedFileSystem.view} before it
 * reject every call with {@link SimulatedCrashError} (the crashed process is gone and can touch nothing), and the file
 * system goes on from the image, all of it durable: a writer reopened on it sees what a machine sees after reboot.
 *
 * **Errors** are Node.js errno errors with `code` set: ENOENT, EEXIST, EBADF, ENOTDIR, EISDIR, EPERM (link of a
 * directory), EINVAL (truncating a read-only descriptor). Opening a directory fails with EISDIR in every mode (the
 * writer never opens directories except through `fsyncDirectory`). `readdir` lists names in code-unit order.
 *
 * **Faults.** {@link SimulatedFileSystem.inject} fails the n-th matching call with ENOSPC, EIO or any code, before it
 * changes anything; {@link SimulatedFileSystem.crashAtCall} makes call k and every later call throw
 * {@link SimulatedCrashError} until `crash` is called, so nothing after the crash point reaches the image.
 *
 * Calls run one at a time: each waits a microtask, then runs to completion, so concurrent callers interleave between
 * calls, never inside one. Paths are absolute POSIX paths; {@link SimulatedFileSystem.materialize} and
 * {@link SimulatedFileSystem.load} copy between a subtree of the image and a real directory, for readers that read
 * real files.
 */
export class SimulatedFileSystem implements FileSystem {
  readonly #nodes = new Map<number, Node>();
  readonly #fds = new Map<number, Descriptor>();
  #nextIno = ROOT_INO + 1;
  #nextFd = 3;
  #nextGroup = 1;
  #boot = 0;
  #calls = 0;
  #crashAt: number | undefined;
  #halted = false;
  #faults: { fault: SimulatedFault; seen: number }[] = [];

  /** Creates an empty file system holding only the root directory `/` (durable). */
  constructor() {
    this.#nodes.set(ROOT_INO, { kind: 'dir', ino: ROOT_INO, durable: new Map(), current: new Map(), log: [] });
  }

  /** Calls made so far (every operation, failed ones included); the counter {@link crashAtCall} compares with. */
  get calls(): number {
    return this.#calls;
  }

  /** How many crashes and process deaths ({@link kill}) happened: each one starts a new "boot". */
  get boots(): number {
    return this.#boot;
  }

  /** True once a planned crash point has passed and every call throws, until {@link crash}. */
  get halted(): boolean {
    return this.#halted;
  }

  /** Arms faults; each counts its matching calls from now and fires once. */
  inject(...faults: SimulatedFault[]): void {
    for (const fault of faults) this.#faults.push({ fault, seen: 0 });
  }

  /** Disarms every fault not fired yet, and any planned crash point. */
  clearFaults(): void {
    this.#faults = [];
    this.#crashAt = undefined;
  }

  /**
   * Plans a crash: the call numbered `k` (0-based, counting from the file system's creation as {@link calls} does)
   * and every later call throw {@link SimulatedCrashError} without effect, as when the process died just before it.
   * Call {@link crash} afterwards to compute the image.
   */
  crashAtCall(k: number): void {
    this.#crashAt = k;
    if (this.#calls >= k) this.#halted = true;
  }

  /**
   * A `FileSystem` (of `@turnjournal/writer`) bound to the current boot: after the next {@link crash} every call through it rejects with
   * {@link SimulatedCrashError}. Give writers a view, so that a writer "killed" by a crash cannot write, unlink or
   * release a lock in the image the next writer runs on.
   */
  view(): FileSystem {
    const boot = this.#boot;
    const out: Partial<Record<SimulatedOperation, unknown>> = {};
    for (const op of SIMULATED_OPERATIONS) {
      const call = this[op] as (...args: unknown[]) => Promise<unknown>;
      out[op] = (...args: unknown[]) =>
        this.#boot === boot
          ? call.apply(this, args)
          : Promise.reject(new SimulatedCrashError(`${op} by a process that died in crash ${boot + 1}`));
    }
    return out as FileSystem;
  }

  /**
   * Simulates a power loss: computes the post-crash image (see the class comment for exactly what may survive),
   * invalidates every descriptor and view, clears the planned crash point and the faults, and goes on from the image.
   * Returns what became of every unsynced operation.
   */
  crash(random: RandomSource): CrashReport {
    const pick = (n: number) => Math.min(n - 1, Math.floor(random() * n));
    const data: Record<string, string[]> = {};
    const entries: Record<string, string[]> = {};
    const paths = this.#pathsByIno();
    // Directories first, in inode order (deterministic), then files.
    const inos = [...this.#nodes.keys()].sort((a, b) => a - b);
    for (const ino of inos) {
      const node = this.#nodes.get(ino) as Node;
      if (node.kind !== 'dir') continue;
      const notes: string[] = [];
      const keepGroup = new Map<number, boolean>();
      const image = new Map(node.durable);
      for (const op of node.log) {
        let keep = keepGroup.get(op.group);
        if (keep === undefined) {
          keep = pick(2) === 1;
          keepGroup.set(op.group, keep);
        }
        notes.push(`${keep ? 'kept' : 'dropped'} ${op.ino === null ? 'unlink' : 'entry'} ${op.name}`);
        if (!keep) continue;
        if (op.ino === null) image.delete(op.name);
        else image.set(op.name, op.ino);
      }
      if (notes.length > 0) entries[paths.get(ino) ?? `#${ino}`] = notes;
      node.durable = image;
      node.current = new Map(image);
      node.log = [];
    }
    for (const ino of inos) {
      const node = this.#nodes.get(ino) as Node;
      if (node.kind !== 'file' || node.log.length === 0) {
        if (node.kind === 'file') node.current = node.durable;
        continue;
      }
      const notes: string[] = [];
      const survivors: DataOp[] = [];
      for (const op of node.log) {
        if (op.kind === 'truncate') {
          const keep = pick(2) === 1;
          notes.push(`${keep ? 'kept' : 'dropped'} truncate(${op.length})`);
          if (keep) survivors.push(op);
          continue;
        }
        const fate = pick(4);
        const where = `write(${op.position}+${op.bytes.length})`;
        if (fate === 0) notes.push(`dropped ${where}`);
        else if (fate === 1) {
          notes.push(`kept ${where}`);
          survivors.push(op);
        } else if (fate === 2) {
          const length = pick(op.bytes.length + 1);
          notes.push(`kept ${length} bytes of ${where}`);
          if (length > 0) survivors.push({ kind: 'write', position: op.position, bytes: op.bytes.slice(0, length) });
        } else {
          notes.push(`zeroed ${where}`);
          survivors.push({ kind: 'write', position: op.position, bytes: new Uint8Array(op.bytes.length) });
        }
      }
      // Writeback reorders: a random permutation of the survivors (Fisher-Yates).
      for (let i = survivors.length - 1; i > 0; i--) {
        const j = pick(i + 1);
        [survivors[i], survivors[j]] = [survivors[j] as DataOp, survivors[i] as DataOp];
      }
      let content = node.durable;
      for (const op of survivors) content = applyData(content, op);
      data[paths.get(ino) ?? `#${ino}`] = notes;
      node.durable = content;
      node.current = content;
      node.log = [];
    }
    this.#fds.clear();
    this.#collectUnreachable();
    this.#boot += 1;
    this.#halted = false;
    this.#crashAt = undefined;
    this.#faults = [];
    return { data, entries };
  }

  /**
   * Simulates the death of the process (SIGKILL) without a power loss: every descriptor and view becomes invalid, the
   * planned crash point and the faults are cleared, and nothing is lost: unsynced data and entries stay unsynced
   * (the kernel still holds them), so a later {@link crash} may still lose them.
   */
  kill(): void {
    this.#fds.clear();
    this.#boot += 1;
    this.#halted = false;
    this.#crashAt = undefined;
    this.#faults = [];
  }

  /** Makes everything durable, as a clean shutdown with `sync` would; descriptors stay valid. */
  syncAll(): void {
    for (const node of this.#nodes.values()) {
      if (node.kind === 'file') node.durable = node.current;
      else node.durable = new Map(node.current);
      node.log = [];
    }
  }

  /** The current bytes of a file (what a reader sees now), or undefined when the path names no file. */
  peek(path: string): Uint8Array | undefined {
    const node = this.#lookup(path);
    return node?.kind === 'file' ? node.current.slice() : undefined;
  }

  /** The durable bytes of a file, or undefined when the path names no file now. */
  peekDurable(path: string): Uint8Array | undefined {
    const node = this.#lookup(path);
    return node?.kind === 'file' ? node.durable.slice() : undefined;
  }

  /**
   * Writes the current image of the subtree at `from` (default `/`) into the real directory `target` (created when
   * missing), so that readers of real files (`@turnjournal/reader`) can check it. Does not change the simulator.
   */
  materialize(target: string, from = '/'): void {
    const node = this.#lookup(from);
    if (node?.kind !== 'dir') throw errno('ENOTDIR', 'materialize', from);
    mkdirSync(target, { recursive: true });
    for (const [name, ino] of node.current) {
      const child = this.#nodes.get(ino) as Node;
      if (child.kind === 'dir') this.materialize(join(target, name), posix.join(from, name));
      else writeFileSync(join(target, name), child.current);
    }
  }

  /**
   * Copies the real directory `source` into the image at `at` (default `/`, created with missing parents), all of it
   * durable, replacing files of the same names. Used to start from real files, or to bring back what a tool that works
   * on real files (store recovery) did to a materialized copy.
   */
  load(source: string, at = '/'): void {
    const dir = this.#ensureDirSync(at);
    for (const name of readdirSync(source).sort()) {
      const real = join(source, name);
      if (statSync(real).isDirectory()) {
        this.load(real, posix.join(at, name));
        continue;
      }
      const existing = dir.current.get(name);
      if (existing !== undefined && this.#nodes.get(existing)?.kind === 'dir')
        throw errno('EISDIR', 'load', posix.join(at, name));
      const bytes = new Uint8Array(readFileSync(real));
      const file: FileNode = { kind: 'file', ino: this.#nextIno++, durable: bytes, current: bytes, log: [] };
      this.#nodes.set(file.ino, file);
      dir.current.set(name, file.ino);
      dir.durable.set(name, file.ino);
    }
  }

  /** Removes everything under `at` (default `/`) from the image, durably; the directory itself stays. */
  clear(at = '/'): void {
    const dir = this.#lookup(at);
    if (dir?.kind !== 'dir') throw errno('ENOTDIR', 'clear', at);
    dir.current.clear();
    dir.durable.clear();
    dir.log = [];
    this.#collectUnreachable();
  }

  // ---- the FileSystem layer ----

  /** Opens a file (see `FileSystem.open`); creating one records an unsynced entry in its directory. */
  async open(path: string, mode: OpenMode): Promise<number> {
    await this.#enter('open', path);
    const { dir, name, node } = this.#resolveEntry(path, 'open');
    if (node?.kind === 'dir') throw errno('EISDIR', 'open', path);
    let file = node;
    if (mode === 'create-exclusive' && file !== undefined) throw errno('EEXIST', 'open', path);
    if (file === undefined) {
      if (mode === 'read') throw errno('ENOENT', 'open', path);
      file = { kind: 'file', ino: this.#nextIno++, durable: new Uint8Array(0), current: new Uint8Array(0), log: [] };
      this.#nodes.set(file.ino, file);
      this.#setEntry(dir, name, file.ino, this.#nextGroup++);
    }
    const fd = this.#nextFd++;
    this.#fds.set(fd, { ino: file.ino, path: posix.resolve(path), writable: mode !== 'read', boot: this.#boot });
    return fd;
  }

  /** Writes at `position` (see `FileSystem.write`); never short. The write is unsynced until the file is synced. */
  async write(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): Promise<number> {
    const { file, descriptor } = this.#file(fd, await this.#enterFd('write', fd));
    if (!descriptor.writable) throw errno('EBADF', 'write', descriptor.path, 'not open for writing');
    if (length === 0) return 0;
    const op: DataOp = { kind: 'write', position, bytes: buffer.slice(offset, offset + length) };
    file.log.push(op);
    file.current = applyData(file.current, op);
    return length;
  }

  /** Reads the current (not necessarily durable) bytes, as the page cache would serve them. */
  async read(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): Promise<number> {
    const { file } = this.#file(fd, await this.#enterFd('read', fd));
    const bytes = file.current.subarray(Math.min(position, file.current.length), position + length);
    buffer.set(bytes, offset);
    return bytes.length;
  }

  /** Makes the file's bytes and size durable; its name still needs `fsyncDirectory`. */
  async fdatasync(fd: number): Promise<void> {
    const { file } = this.#file(fd, await this.#enterFd('fdatasync', fd));
    file.durable = file.current;
    file.log = [];
  }

  /** Makes the file's bytes and size durable (the model has no other metadata); its name still needs `fsyncDirectory`. */
  async fsync(fd: number): Promise<void> {
    const { file } = this.#file(fd, await this.#enterFd('fsync', fd));
    file.durable = file.current;
    file.log = [];
  }

  /** Truncates (or extends with NUL bytes) the open file; unsynced until the file is synced. */
  async ftruncate(fd: number, length: number): Promise<void> {
    const { file, descriptor } = this.#file(fd, await this.#enterFd('ftruncate', fd));
    if (!descriptor.writable) throw errno('EINVAL', 'ftruncate', descriptor.path, 'not open for writing');
    const op: DataOp = { kind: 'truncate', length };
    file.log.push(op);
    file.current = applyData(file.current, op);
  }

  /**
   * Size (current bytes), inode and link count of an open file: `nlink` is 0 once every name of the file was unlinked
   * (or renamed over) while the descriptor stays open, as a writer whose journal an operator removed sees it.
   */
  async fstat(fd: number): Promise<FileStat> {
    const { file } = this.#file(fd, await this.#enterFd('fstat', fd));
    return { size: file.current.length, ino: file.ino, isDirectory: false, nlink: this.#links(file.ino) };
  }

  /** Closes a descriptor; unsynced data stays unsynced (closing is not a sync). */
  async close(fd: number): Promise<void> {
    this.#file(fd, await this.#enterFd('close', fd));
    this.#fds.delete(fd);
  }

  /** Metadata of a path; ENOENT when absent. */
  async stat(path: string): Promise<FileStat> {
    await this.#enter('stat', path);
    const node = posix.resolve(path) === '/' ? this.#nodes.get(ROOT_INO) : this.#resolveEntry(path, 'stat').node;
    if (node === undefined) throw errno('ENOENT', 'stat', path);
    return node.kind === 'dir'
      ? { size: 4096, ino: node.ino, isDirectory: true }
      : { size: node.current.length, ino: node.ino, isDirectory: false, nlink: this.#links(node.ino) };
  }

  /** Creates one directory; its entry in the parent is unsynced until the parent is fsynced. */
  async mkdir(path: string): Promise<void> {
    await this.#enter('mkdir', path);
    const { dir, name, node } = this.#resolveEntry(path, 'mkdir');
    if (node !== undefined) throw errno('EEXIST', 'mkdir', path);
    const created: DirNode = { kind: 'dir', ino: this.#nextIno++, durable: new Map(), current: new Map(), log: [] };
    this.#nodes.set(created.ino, created);
    this.#setEntry(dir, name, created.ino, this.#nextGroup++);
  }

  /** Makes every pending entry operation of the directory durable. */
  async fsyncDirectory(path: string): Promise<void> {
    await this.#enter('fsyncDirectory', path);
    const dir = this.#dirAt(path, 'fsyncDirectory');
    dir.durable = new Map(dir.current);
    dir.log = [];
  }

  /** Renames atomically, replacing the target; unsynced until the directory (both, across directories) is fsynced. */
  async rename(from: string, to: string): Promise<void> {
    await this.#enter('rename', from);
    const source = this.#resolveEntry(from, 'rename');
    if (source.node === undefined) throw errno('ENOENT', 'rename', from);
    const target = this.#resolveEntry(to, 'rename');
    if (target.node?.ino === source.node.ino) return;
    if (target.node !== undefined) {
      if (target.node.kind === 'dir' && source.node.kind === 'file') throw errno('EISDIR', 'rename', to);
      if (target.node.kind === 'file' && source.node.kind === 'dir') throw errno('ENOTDIR', 'rename', to);
      if (target.node.kind === 'dir' && target.node.current.size > 0) throw errno('ENOTEMPTY', 'rename', to);
    }
    if (source.node.kind === 'dir' && this.#isAncestor(source.node.ino, target.dir.ino))
      throw errno('EINVAL', 'rename', to);
    const group = this.#nextGroup++;
    this.#setEntry(target.dir, target.name, source.node.ino, group);
    // Across directories the halves are separate decisions at a crash; give the source its own group then.
    this.#setEntry(source.dir, source.name, null, source.dir === target.dir ? group : this.#nextGroup++);
  }

  /** Adds a name for an existing file (same inode); EEXIST when the name exists; unsynced until the directory is fsynced. */
  async link(existing: string, newPath: string): Promise<void> {
    await this.#enter('link', existing);
    const source = this.#resolveEntry(existing, 'link');
    if (source.node === undefined) throw errno('ENOENT', 'link', existing);
    if (source.node.kind === 'dir') throw errno('EPERM', 'link', existing);
    const target = this.#resolveEntry(newPath, 'link');
    if (target.node !== undefined) throw errno('EEXIST', 'link', newPath);
    this.#setEntry(target.dir, target.name, source.node.ino, this.#nextGroup++);
  }

  /** Removes a name; the inode lives on while a descriptor holds it. Unsynced until the directory is fsynced. */
  async unlink(path: string): Promise<void> {
    await this.#enter('unlink', path);
    const { dir, name, node } = this.#resolveEntry(path, 'unlink');
    if (node === undefined) throw errno('ENOENT', 'unlink', path);
    if (node.kind === 'dir') throw errno('EISDIR', 'unlink', path);
    this.#setEntry(dir, name, null, this.#nextGroup++);
  }

  /** Names of a directory's current entries, in code-unit order. */
  async readdir(path: string): Promise<string[]> {
    await this.#enter('readdir', path);
    return [...this.#dirAt(path, 'readdir').current.keys()].sort();
  }

  /** The current bytes of a file. */
  async readFile(path: string): Promise<Uint8Array> {
    await this.#enter('readFile', path);
    const { node } = this.#resolveEntry(path, 'open');
    if (node === undefined) throw errno('ENOENT', 'open', path);
    if (node.kind === 'dir') throw errno('EISDIR', 'read', path);
    return node.current.slice();
  }

  // ---- internals ----

  /** Counts the call, applies the crash point and the faults. Waits a microtask first, so callers interleave. */
  async #enter(op: SimulatedOperation, path: string): Promise<void> {
    await Promise.resolve();
    const call = this.#calls++;
    if (this.#crashAt !== undefined && call >= this.#crashAt) this.#halted = true;
    if (this.#halted) throw new SimulatedCrashError(`${op} '${path}' after the planned crash point`);
    let hit: SimulatedFault | undefined;
    for (const armed of this.#faults) {
      if (armed.fault.op !== '*' && armed.fault.op !== op) continue;
      if (armed.fault.path !== undefined && !path.endsWith(armed.fault.path)) continue;
      armed.seen += 1;
      if (hit === undefined && armed.seen === (armed.fault.nth ?? 1)) hit = armed.fault;
    }
    if (hit !== undefined) throw errno(hit.errno ?? 'EIO', op, path, 'injected fault');
  }

  async #enterFd(op: SimulatedOperation, fd: number): Promise<Descriptor | undefined> {
    const descriptor = this.#fds.get(fd);
    await this.#enter(op, descriptor?.path ?? `fd ${fd}`);
    // Looked up again: a crash while this call waited invalidates the descriptor.
    return this.#fds.get(fd);
  }

  #file(fd: number, descriptor: Descriptor | undefined): { file: FileNode; descriptor: Descriptor } {
    if (descriptor === undefined || descriptor.boot !== this.#boot) throw errno('EBADF', 'fd', `fd ${fd}`);
    return { file: this.#nodes.get(descriptor.ino) as FileNode, descriptor };
  }

  /**
   * The names that lead to file `ino` now: entries of directories reachable from the root (a directory has no entry
   * once it is renamed away under another one that is; the model has no rmdir). A scan: the simulator holds a few
   * files.
   */
  #links(ino: number): number {
    let links = 0;
    const pending: DirNode[] = [this.#nodes.get(ROOT_INO) as DirNode];
    for (let dir = pending.pop(); dir !== undefined; dir = pending.pop())
      for (const child of dir.current.values()) {
        if (child === ino) links += 1;
        const node = this.#nodes.get(child);
        if (node?.kind === 'dir') pending.push(node);
      }
    return links;
  }

  #setEntry(dir: DirNode, name: string, ino: number | null, group: number): void {
    if (ino === null) dir.current.delete(name);
    else dir.current.set(name, ino);
    dir.log.push({ name, ino, group });
  }

  /** The parent directory, last name and node (if any) of `path`; ENOENT/ENOTDIR for a bad parent. */
  #resolveEntry(path: string, syscall: string): { dir: DirNode; name: string; node: Node | undefined } {
    const absolute = posix.resolve(path);
    if (absolute === '/') throw errno('EBUSY', syscall, path, 'the root has no entry');
    const dir = this.#dirAt(posix.dirname(absolute), syscall, path);
    const name = posix.basename(absolute);
    const ino = dir.current.get(name);
    return { dir, name, node: ino === undefined ? undefined : this.#nodes.get(ino) };
  }

  #dirAt(path: string, syscall: string, reported = path): DirNode {
    let node: Node = this.#nodes.get(ROOT_INO) as DirNode;
    for (const part of posix
      .resolve(path)
      .split('/')
      .filter((p) => p !== '')) {
      if (node.kind !== 'dir') throw errno('ENOTDIR', syscall, reported);
      const ino: number | undefined = node.current.get(part);
      if (ino === undefined) throw errno('ENOENT', syscall, reported);
      node = this.#nodes.get(ino) as Node;
    }
    if (node.kind !== 'dir') throw errno('ENOTDIR', syscall, reported);
    return node;
  }

  #lookup(path: string): Node | undefined {
    try {
      const absolute = posix.resolve(path);
      if (absolute === '/') return this.#nodes.get(ROOT_INO);
      return this.#resolveEntry(absolute, 'lookup').node;
    } catch (error) {
      // A path through a missing directory or a file: nothing there. Anything else is the simulator's own bug.
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
      return undefined;
    }
  }

  #ensureDirSync(path: string): DirNode {
    let dir = this.#nodes.get(ROOT_INO) as DirNode;
    for (const part of posix
      .resolve(path)
      .split('/')
      .filter((p) => p !== '')) {
      const ino = dir.current.get(part);
      if (ino === undefined) {
        const created: DirNode = { kind: 'dir', ino: this.#nextIno++, durable: new Map(), current: new Map(), log: [] };
        this.#nodes.set(created.ino, created);
        dir.current.set(part, created.ino);
        dir.durable.set(part, created.ino);
        dir = created;
        continue;
      }
      const node = this.#nodes.get(ino) as Node;
      if (node.kind !== 'dir') throw errno('ENOTDIR', 'load', path);
      dir = node;
    }
    return dir;
  }

  #isAncestor(ancestor: number, ino: number): boolean {
    const parents = new Map<number, number>();
    for (const node of this.#nodes.values())
      if (node.kind === 'dir') for (const child of node.current.values()) parents.set(child, node.ino);
    for (let at: number | undefined = ino; at !== undefined; at = parents.get(at)) if (at === ancestor) return true;
    return false;
  }

  /** One path per reachable inode (the first found), for reports. */
  #pathsByIno(): Map<number, string> {
    const paths = new Map<number, string>([[ROOT_INO, '/']]);
    const walk = (dir: DirNode, at: string) => {
      for (const [name, ino] of [...dir.current, ...dir.durable]) {
        if (paths.has(ino)) continue;
        const path = posix.join(at, name);
        paths.set(ino, path);
        const child = this.#nodes.get(ino);
        if (child?.kind === 'dir') walk(child, path);
      }
    };
    walk(this.#nodes.get(ROOT_INO) as DirNode, '/');
    return paths;
  }

  /** Drops inodes no entry of the image leads to and no descriptor holds (the root always stays). */
  #collectUnreachable(): void {
    const reachable = new Set<number>([ROOT_INO, ...[...this.#fds.values()].map((d) => d.ino)]);
    const walk = (dir: DirNode) => {
      for (const ino of dir.current.values()) {
        if (reachable.has(ino)) continue;
        reachable.add(ino);
        const child = this.#nodes.get(ino);
        if (child?.kind === 'dir') walk(child);
      }
    };
    walk(this.#nodes.get(ROOT_INO) as DirNode);
    for (const ino of [...this.#nodes.keys()]) if (!reachable.has(ino)) this.#nodes.delete(ino);
  }
}
