// Helpers shared by the suites that run the reference writer on the simulated file system.
import { mkdtempSync, readdirSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JournalSource } from '@turnjournal/reader';
import type { AcquireLockOptions } from '@turnjournal/writer';

/**
 * Lock options for writers on the simulator. A lock left in a crash image names this (live) test process; in reality
 * its holder died with the crash. The suites run one writer per file at a time, so every lock found is a dead one.
 */
export const DEAD_HOLDERS: AcquireLockOptions = { statusOf: (text) => (text === undefined ? 'none' : 'stale') };

/** A positional source over bytes in memory, for `readJournal`. */
export function bytesSource(bytes: Uint8Array): JournalSource {
  return {
    async read(buffer, offset, length, position) {
      const chunk = bytes.subarray(Math.min(position, bytes.length), position + length);
      buffer.set(chunk, offset);
      return chunk.length;
    },
  };
}

/** The committed lines (without LF) of a file's bytes and the torn tail after the last LF. */
export function splitCommitted(bytes: Uint8Array): { lines: string[]; tail: Uint8Array } {
  const end = bytes.lastIndexOf(0x0a) + 1;
  const text = new TextDecoder().decode(bytes.subarray(0, end));
  return { lines: end === 0 ? [] : text.slice(0, -1).split('\n'), tail: bytes.subarray(end) };
}

/** A fresh real temporary directory; `remove` deletes it. */
export function realTempDir(prefix: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Removes every lock file under `dir` (the holders are dead: see {@link DEAD_HOLDERS}). */
export function removeLocks(dir: string): void {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) removeLocks(path);
    else if (name.endsWith('.lock') || name.endsWith('.takeover')) unlinkSync(path);
  }
}
