import { readFileSync } from 'node:fs';
import {
  checkStore,
  EventLogFold,
  type EventLogState,
  readJournal,
  recoverEventLog,
  replayEventLog,
} from '@turnjournal/reader';
import { type FileSystem, nodeFileSystem } from '../../src/index.js';

// The repository's one convention for property parameters (fixed seed and runs, TJ_PROPERTY_SEED / TJ_PROPERTY_RUNS).
export { propertyParameters } from '../../../schema/test/support/property.js';

/** The reader's fold of the whole file, from its first byte. */
export async function fullFold(file: string): Promise<EventLogState> {
  const fold = new EventLogFold();
  for await (const batch of readJournal(file))
    for (const item of batch) if (item.kind === 'record') fold.add(item.record, { file });
  return fold.finish();
}

/** Every seq in the file, in file order, of the lines that parse. */
export function seqsOf(file: string): number[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line).seq as number);
}

/** The records of the file, parsed. */
export function recordsOf(file: string): Record<string, unknown>[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** What every reader entry point derives from the file, to compare with the writer's own state. */
export async function readerViews(file: string) {
  const full = await fullFold(file);
  const recovered = await recoverEventLog(file);
  const replay = await replayEventLog(file);
  const check = await checkStore([file]);
  return { full, recovered, replay, check };
}

/** Finding codes of `checkStore` with severity warn or error. */
export function seriousFindings(check: Awaited<ReturnType<typeof checkStore>>): string[] {
  return check.findings.filter((f) => f.severity !== 'info').map((f) => `${f.code}: ${f.message}`);
}

function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: injected fault`), { code });
}

/**
 * The real file system with faults on demand: `failWrites` makes the next N data writes of `target` throw
 * (`writeErrno`), `failWriteAt` chosen ones, `failSyncs` the next N fdatasyncs, `partialWrite` writes half the bytes before failing (a torn
 * append). `beforeRename` runs before each rename, so a test can act while a compaction holds the lock.
 */
export class FaultyFs implements FileSystem {
  failWrites = 0;
  /** Data writes of `target` counted so far, failed ones included. */
  writes = 0;
  /** Which data writes (0-based, counted in `writes`) fail. */
  failWriteAt = new Set<number>();
  writeErrno = 'ENOSPC';
  partialWrite = false;
  failSyncs = 0;
  syncErrno = 'EIO';
  beforeRename: (() => Promise<void>) | undefined;
  readonly #target: string;
  readonly #targetFds = new Set<number>();

  constructor(target: string) {
    this.#target = target;
  }

  async open(path: string, mode: Parameters<FileSystem['open']>[1]): Promise<number> {
    const fd = await nodeFileSystem.open(path, mode);
    if (path === this.#target) this.#targetFds.add(fd);
    return fd;
  }
  async write(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): Promise<number> {
    const number = this.#targetFds.has(fd) ? this.writes++ : -1;
    if (number >= 0 && (this.failWrites > 0 || this.failWriteAt.has(number))) {
      if (!this.failWriteAt.has(number)) this.failWrites -= 1;
      if (this.partialWrite && length > 1)
        await nodeFileSystem.write(fd, buffer, offset, Math.floor(length / 2), position);
      throw errno(this.writeErrno);
    }
    return nodeFileSystem.write(fd, buffer, offset, length, position);
  }
  read(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): Promise<number> {
    return nodeFileSystem.read(fd, buffer, offset, length, position);
  }
  async fdatasync(fd: number): Promise<void> {
    if (this.#targetFds.has(fd) && this.failSyncs > 0) {
      this.failSyncs -= 1;
      throw errno(this.syncErrno);
    }
    return nodeFileSystem.fdatasync(fd);
  }
  fsync(fd: number): Promise<void> {
    return nodeFileSystem.fsync(fd);
  }
  ftruncate(fd: number, length: number): Promise<void> {
    return nodeFileSystem.ftruncate(fd, length);
  }
  fstat(fd: number) {
    return nodeFileSystem.fstat(fd);
  }
  close(fd: number): Promise<void> {
    this.#targetFds.delete(fd);
    return nodeFileSystem.close(fd);
  }
  stat(path: string) {
    return nodeFileSystem.stat(path);
  }
  mkdir(path: string): Promise<void> {
    return nodeFileSystem.mkdir(path);
  }
  fsyncDirectory(path: string): Promise<void> {
    return nodeFileSystem.fsyncDirectory(path);
  }
  async rename(from: string, to: string): Promise<void> {
    await this.beforeRename?.();
    return nodeFileSystem.rename(from, to);
  }
  link(existing: string, newPath: string): Promise<void> {
    return nodeFileSystem.link(existing, newPath);
  }
  unlink(path: string): Promise<void> {
    return nodeFileSystem.unlink(path);
  }
  readdir(path: string): Promise<string[]> {
    return nodeFileSystem.readdir(path);
  }
  readFile(path: string): Promise<Uint8Array> {
    return nodeFileSystem.readFile(path);
  }
}

/** A clock that advances one millisecond per call from a fixed instant, so `ts` values are reproducible. */
export function steppingClock(start = Date.parse('2026-05-11T00:00:00.000Z')): () => number {
  let now = start;
  return () => now++;
}
