import type { FileSystem } from './file-system.js';

/**
 * The lease of a held lock (TJ-DUR-038): while the lock is held, its holder sets the lock file's modification time at
 * least every fifth of `leaseMs`, so that a writer in another PID namespace of the machine (another container on the
 * same kernel), for which the holder's pid means nothing, can still tell a running holder from a dead one.
 *
 * Renewal is also a fencing check: before it touches the lock, it confirms that the name still leads to the file it
 * created (same inode). When it does not, another writer took the lock over (this holder was paused or stalled past
 * its lease) or the lock was removed: the lease is marked lost, and the writer refuses every append from then on
 * (TJ-DUR-040). One timer renews every lease of the process; it never keeps the process alive.
 */
export class Lease {
  readonly #fs: FileSystem;
  readonly #touch: (path: string) => Promise<void>;
  /** The lock file. */
  readonly path: string;
  /** The lock file's inode when it was created. */
  readonly ino: number;
  /** The lease period promised in the lock (`lease_ms`). */
  readonly leaseMs: number;
  #lost = false;
  #ended = false;

  constructor(fs: FileSystem, touch: (path: string) => Promise<void>, path: string, ino: number, leaseMs: number) {
    this.#fs = fs;
    this.#touch = touch;
    this.path = path;
    this.ino = ino;
    this.leaseMs = leaseMs;
    renewals.add(this);
  }

  /** True once a renewal found the lock file replaced or gone. */
  get lost(): boolean {
    return this.#lost;
  }

  /** Marks the lease lost: a check of the lock found it is no longer this holder's. */
  markLost(): void {
    this.#lost = true;
    this.end();
  }

  /** Stops renewing (the lock is released, or lost). */
  end(): void {
    this.#ended = true;
    renewals.delete(this);
  }

  /** Renews the lease once, unless the lock is no longer this holder's. */
  async renew(): Promise<void> {
    if (this.#ended) return;
    // The inode alone: a renewal every few seconds of every lock held must stay a stat and a touch. A lock replaced by
    // one that reused the inode number is caught by the token check of the next sync (TJ-DUR-040); touching it meanwhile
    // only renews a lease whose holder has just taken it.
    let ino: number;
    try {
      ino = (await this.#fs.stat(this.path)).ino;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return this.markLost();
      throw error;
    }
    if (ino !== this.ino) return this.markLost();
    if (!this.#ended) await this.#touch(this.path);
  }
}

/** Every lease of the process that is being renewed. */
const renewals = new Set<Lease>();
let timer: NodeJS.Timeout | undefined;
let timerPeriodMs = Number.POSITIVE_INFINITY;

/**
 * Starts renewing `lease` with the process's one timer, whose period is a fifth of the shortest lease held. A renewal
 * that fails (EIO, EACCES on the lock's directory) is reported as a process warning and tried again at the next tick:
 * it proves nothing about who holds the lock, and a lease that runs out for want of renewals is caught by the fencing
 * check of the next sync (TJ-DUR-040).
 */
export function renewPeriodically(lease: Lease): void {
  const period = Math.max(10, Math.floor(lease.leaseMs / 5));
  if (timer !== undefined && period >= timerPeriodMs) return;
  if (timer !== undefined) clearInterval(timer);
  timerPeriodMs = period;
  timer = setInterval(renewAll, period);
  timer.unref();
}

function renewAll(): void {
  if (renewals.size === 0) {
    clearInterval(timer);
    timer = undefined;
    timerPeriodMs = Number.POSITIVE_INFINITY;
    return;
  }
  for (const lease of renewals)
    lease.renew().catch((error: unknown) => {
      process.emitWarning(
        `turnjournal: renewing the lease of ${lease.path} failed (${(error as Error).message}); retried at the next tick`,
        { code: 'TURNJOURNAL_LEASE_RENEWAL' },
      );
    });
}
