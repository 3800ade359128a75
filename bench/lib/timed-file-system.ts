import { performance } from 'node:perf_hooks';
import {
  type FileSystem,
  nodeFileSystem,
  type SynchronousWrite,
  synchronousStat,
  synchronousWrite,
  withSynchronousStat,
  withSynchronousWrite,
} from '../../packages/writer/dist/fs/file-system.js';

/** When the last sync through a {@link timedFileSystem} was issued and completed, and its writes (performance.now). */
export interface FileSystemStamps {
  syncIssued: number;
  syncDone: number;
  /** Synchronous writes so far, and their bytes. */
  writes: number;
  bytes: number;
  /** When the last synchronous write began and returned. */
  writeStart: number;
  writeDone: number;
}

/**
 * `fs`, a wrapper of the writer's real file system made by spreading it, given the real synchronous twins (stat, and
 * write unless `write` replaces it), which a spread does not copy (file-system.ts): without them the writer would fall
 * back to its asynchronous calls, and a probe would measure another path than the one it studies.
 */
export function withRealTwins(fs: FileSystem, write?: SynchronousWrite): FileSystem {
  const statNow = synchronousStat(nodeFileSystem);
  const writeNow = synchronousWrite(nodeFileSystem);
  if (statNow === undefined || writeNow === undefined) throw new Error('the real file system has synchronous twins');
  withSynchronousStat(fs, statNow);
  withSynchronousWrite(fs, write ?? writeNow);
  return fs;
}

/**
 * The writer's real file system, with its `fdatasync` and its synchronous writes stamped: what the probes use to cut a
 * call at the issue and the completion of its sync.
 */
export function timedFileSystem(): { readonly fs: FileSystem; readonly stamps: FileSystemStamps } {
  const stamps: FileSystemStamps = { syncIssued: 0, syncDone: 0, writes: 0, bytes: 0, writeStart: 0, writeDone: 0 };
  const writeNow = synchronousWrite(nodeFileSystem);
  if (writeNow === undefined) throw new Error('the real file system has a synchronous write');
  const stampedWrite: SynchronousWrite = (...args) => {
    stamps.writes += 1;
    stamps.bytes += args[3];
    stamps.writeStart = performance.now();
    const written = writeNow(...args);
    stamps.writeDone = performance.now();
    return written;
  };
  const fs = withRealTwins(
    {
      ...nodeFileSystem,
      fdatasync: (fd) => {
        stamps.syncIssued = performance.now();
        return nodeFileSystem.fdatasync(fd).then(() => {
          stamps.syncDone = performance.now();
        });
      },
    },
    stampedWrite,
  );
  return { fs, stamps };
}
