import { spawn } from 'node:child_process';
import { lstatSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { JournalLockedError, WriterError } from '../errors.js';

/** How long a rewrite waits for a foreign writer's flock (TJ-DUR-050): its appends take milliseconds. */
export const FOREIGN_LOCK_WAIT_MS = 10_000;

/** What util-linux's flock(1) exits with when the wait ran out (its `--conflict-exit-code`). */
const CONFLICT_EXIT_CODE = 75;

/**
 * The command flock(1) runs while it holds the lock: it says so, then waits for its stdin to close, which happens when
 * this process releases the lock or dies, so a crashed compaction never leaves the lock held.
 */
const HOLD_SCRIPT = 'echo held; read -r _; exit 0';

/** `<dir>/.<name>.lock`: for `events.jsonl`, gptme's `.events.jsonl.lock` (spec §11.7). */
export function foreignLockPath(file: string): string {
  return join(dirname(file), `.${basename(file)}.lock`);
}

/** A foreign writer's flock held for a rewrite, or nothing held (see {@link holdForeignFlock}). */
export interface ForeignFlock {
  /** True when the flock is held; false when there was nothing to hold (no flock(1) and no foreign lock file). */
  readonly held: boolean;
  /** Frees the flock: resolves once the process that held it has exited. */
  release(): Promise<void>;
}

const NOTHING_HELD: ForeignFlock = { held: false, release: () => Promise.resolve() };

/**
 * Holds `flock(LOCK_EX)` on {@link foreignLockPath} of `file` for a rewrite of it (spec TJ-DUR-050, TJ-DUR-052).
 * Node.js has no flock call, so a child process holds it: util-linux's `flock(1)` opens the lock file (creating it,
 * never removing it), waits for the lock at most `waitMs`, then runs a shell that holds it until this process releases
 * it or dies (its stdin closes either way). A writer that appends under that flock (gptme) then waits for the rewrite.
 *
 * Rejects with `JournalLockedError` (`journal_locked`) when another process held the flock for `waitMs`. Where flock(1) is not installed,
 * resolves holding nothing when the lock file does not exist (no writer of that convention has written the file), and
 * rejects with `foreign_lock_unavailable` when it does (TJ-DUR-053): rewriting without the lock could drop an append.
 */
export function holdForeignFlock(file: string, waitMs: number = FOREIGN_LOCK_WAIT_MS): Promise<ForeignFlock> {
  const lock = foreignLockPath(file);
  const seconds = (Math.max(0, waitMs) / 1000).toFixed(3);
  const child = spawn(
    'flock',
    ['--exclusive', '--close', '--wait', seconds, '--conflict-exit-code', String(CONFLICT_EXIT_CODE), lock].concat([
      'sh',
      '-c',
      HOLD_SCRIPT,
    ]),
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  // Writing nothing, only closing: an EPIPE of a child already gone says nothing the exit does not.
  child.stdin.on('error', () => undefined);
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return new Promise<ForeignFlock>((resolve, reject) => {
    let stdout = '';
    let failedToStart = false;
    const onData = (chunk: Buffer): void => {
      stdout += chunk.toString();
      if (!stdout.includes('held\n')) return;
      child.stdout.off('data', onData);
      child.stdout.resume();
      resolve({ held: true, release: () => release(child.stdin, exited, lock, () => stderr) });
    };
    child.stdout.on('data', onData);
    child.on('error', (error: NodeJS.ErrnoException) => {
      failedToStart = true;
      if (error.code !== 'ENOENT') {
        reject(
          new WriterError('write_failed', `${file}: could not start flock(1) for ${lock}`, file, { cause: error }),
        );
        return;
      }
      if (lstatSync(lock, { throwIfNoEntry: false }) === undefined) {
        resolve(NOTHING_HELD);
        return;
      }
      reject(
        new WriterError(
          'foreign_lock_unavailable',
          `${file}: another writer's lock ${lock} is there, and taking it needs util-linux's flock(1), which is not ` +
            'installed: install it, stop that writer while this runs, or compact from Python (spec TJ-DUR-053)',
          file,
          { cause: error },
        ),
      );
    });
    void exited.then((code) => {
      // Held: the release reports the exit. Never started: settled by 'error' above, which comes first.
      if (stdout.includes('held\n') || failedToStart) return;
      if (code === CONFLICT_EXIT_CODE)
        reject(
          new JournalLockedError(
            file,
            undefined,
            `another process has held ${lock} (flock) for ${seconds} s; try again once it is done`,
          ),
        );
      else reject(new WriterError('write_failed', `${file}: flock(1) on ${lock} exited with ${code}: ${stderr}`, file));
    });
  });
}

async function release(
  stdin: NodeJS.WritableStream,
  exited: Promise<number | null>,
  lock: string,
  stderr: () => string,
): Promise<void> {
  stdin.end();
  const code = await exited;
  // The flock is free whatever the code (its holder is gone); a code other than 0 means the holder misbehaved.
  if (code !== 0) throw new WriterError('write_failed', `flock(1) holding ${lock} exited with ${code}: ${stderr()}`);
}
