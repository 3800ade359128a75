import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LiveClock, LiveEvent, Subscription } from '@turnjournal/live';
import type { FileSystem } from '@turnjournal/writer/file-system';
import { afterEach } from 'vitest';

const stores: string[] = [];
// Registered in each test file that imports this module (Vitest evaluates it once per file).
afterEach(() => {
  for (const dir of stores.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A new empty store directory under the system temporary directory, removed after the test that made it. */
export function tempStore(prefix = 'tj-live-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  stores.push(dir);
  return dir;
}

/** The next `n` events of a subscription, or fewer when it ends first. */
export async function take(subscription: Subscription, n: number): Promise<LiveEvent[]> {
  const events: LiveEvent[] = [];
  while (events.length < n) {
    const next = await subscription.next();
    if (next.done === true) break;
    events.push(next.value);
  }
  return events;
}

/** Calls the live session made on its event log (see {@link countLogCalls}). */
export interface LogCalls {
  /** Writes that carry lines. */
  writes: number;
  /** Of those, writes that ended past the file's length before them: each makes the next sync commit a new size. */
  growing: number;
  /** The text of each growing write. */
  grown: string[];
  /** Writes of pre-allocated space alone (zeros), which the writer makes ahead of its lines, each with a sync. */
  spaceWrites: number;
  fdatasyncs: number;
  fsyncs: number;
}

/**
 * `base` (a plain object, such as `SimulatedFileSystem.view()`) with its writes and syncs of the event log `log`
 * counted, and the writes that grew the file told apart.
 */
export function countLogCalls(base: FileSystem, log: string): { fs: FileSystem; calls: LogCalls } {
  const { fs: tracked, pathOf } = withPaths(base);
  const calls: LogCalls = { writes: 0, growing: 0, grown: [], spaceWrites: 0, fdatasyncs: 0, fsyncs: 0 };
  const fs: FileSystem = {
    ...tracked,
    async write(fd, buffer, offset, length, position, options) {
      if (pathOf(fd) !== log) return base.write(fd, buffer, offset, length, position, options);
      const before = (await base.fstat(fd)).size;
      // Zeros alone are space the writer extends ahead of its lines, in the background (spec §3.8); a line never
      // holds a NUL byte.
      if (buffer.subarray(offset, offset + length).every((byte) => byte === 0)) calls.spaceWrites += 1;
      else {
        calls.writes += 1;
        if (position + length > before) {
          calls.growing += 1;
          calls.grown.push(Buffer.from(buffer.subarray(offset, offset + length)).toString('utf8'));
        }
      }
      return base.write(fd, buffer, offset, length, position, options);
    },
    fdatasync(fd) {
      if (pathOf(fd) === log) calls.fdatasyncs += 1;
      return base.fdatasync(fd);
    },
    fsync(fd) {
      if (pathOf(fd) === log) calls.fsyncs += 1;
      return base.fsync(fd);
    },
  };
  return { fs, calls };
}

/** A record line of an event log, as the tests read it back. */
export interface LogLine {
  seq: number;
  ts: string;
  type: string;
  payload: Record<string, unknown>;
}

/** Every record line of the event log at `file`, checkpoints included; the pre-allocated NUL bytes at its end skipped. */
export function logLines(file: string): LogLine[] {
  return readFileSync(file, 'utf8')
    .replace(/\0+$/, '')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as LogLine);
}

/** `base` with the path each descriptor was opened with remembered: for wrappers that act on one file's calls. */
export function withPaths(base: FileSystem): { fs: FileSystem; pathOf: (fd: number) => string | undefined } {
  const paths = new Map<number, string>();
  const fs: FileSystem = {
    ...base,
    async open(path, mode) {
      const fd = await base.open(path, mode);
      paths.set(fd, path);
      return fd;
    },
  };
  return { fs, pathOf: (fd) => paths.get(fd) };
}

/**
 * A hand-driven pair of clocks for a hub (`clock` option): {@link TestClock.pass} is time passing (both clocks move),
 * {@link TestClock.step} a step of the wall clock alone (NTP, a VM resumed, an operator), which no elapsed time backs.
 */
export class TestClock implements LiveClock {
  wall: number;
  elapsed = 0;

  constructor(wall: number | string) {
    this.wall = typeof wall === 'string' ? Date.parse(wall) : wall;
  }

  now(): number {
    return this.wall;
  }

  monotonic(): number {
    return this.elapsed;
  }

  /** `ms` milliseconds pass. */
  pass(ms: number): void {
    this.wall += ms;
    this.elapsed += ms;
  }

  /** The wall clock steps by `ms` (negative: back); no time passes. */
  step(ms: number): void {
    this.wall += ms;
  }
}
