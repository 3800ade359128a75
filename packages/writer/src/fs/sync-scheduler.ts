import * as fs from 'node:fs';
import { Worker } from 'node:worker_threads';

/**
 * Why this exists: Node.js runs every asynchronous `fsync`/`fdatasync` on libuv's thread pool, which has 4 threads
 * unless `UV_THREADPOOL_SIZE` was set before the pool started (a process-wide setting a library cannot change once
 * anything used the pool). With 64 sessions each waiting for its own sync, 60 wait in line behind 4 while the device
 * could commit them together: on a journalling file system (ext4, XFS) one journal commit covers the metadata of every
 * file changed since the last, so syncs issued together cost about what one does, and a sync whose file a commit has
 * just covered returns almost at once. The scheduler runs the first syncs on libuv's pool, as before (the cheapest
 * round trip, so a lone append pays nothing extra); the ones that would queue behind it go to a few worker threads,
 * each taking a share of the waiting syncs and calling the synchronous system call on each in turn. Every promise
 * still resolves only after its own `fdatasync`/`fsync` returned without error: nothing is skipped or merged, so the
 * guarantee does not depend on how the file system commits.
 *
 * Cost: each worker thread is a V8 isolate of its own, with its own heap (bench/results/history.md, "64 sessions:
 * parallel syncs without `UV_THREADPOOL_SIZE`"), started on the first burst that needs it and stopped after
 * {@link IDLE_STOP_MS} without work.
 */

/** Syncs the scheduler hands to libuv's pool at once: its size, as Node.js reads it when the pool starts. */
const LIBUV_SLOTS = libuvPoolSize();

/** Worker threads at most (each a V8 isolate). */
const MAX_WORKERS = 4;

/** Syncs one worker takes at a time: a share of the queue, so that no sync waits behind a long batch. */
const MAX_BATCH = 16;

/** Started workers that have been idle this long are stopped, so a burst does not keep its threads for ever. */
const IDLE_STOP_MS = 30_000;

/**
 * The worker: receives a batch of descriptors (negative: `-fd - 1` for a full fsync), syncs them in order and answers
 * after each, with the errno error's fields when one fails, so the caller sees the error the asynchronous call gives.
 */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { fdatasyncSync, fsyncSync } = require('node:fs');
parentPort.on('message', (fds) => {
  for (const fd of fds) {
    try {
      if (fd < 0) fsyncSync(-fd - 1); else fdatasyncSync(fd);
      parentPort.postMessage(null);
    } catch (error) {
      parentPort.postMessage({ message: String(error && error.message), code: error && error.code, errno: error && error.errno, syscall: error && error.syscall });
    }
  }
});
`;

interface Request {
  readonly fd: number;
  readonly full: boolean;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

interface SyncWorker {
  readonly worker: Worker;
  /** The batch in progress (answers arrive in its order); empty when idle. */
  batch: Request[];
  answered: number;
  idleSince: number;
}

interface WorkerFailure {
  readonly message: string;
  readonly code?: string;
  readonly errno?: number;
  readonly syscall?: string;
}

function libuvPoolSize(): number {
  const configured = Number.parseInt(process.env.UV_THREADPOOL_SIZE ?? '', 10);
  // libuv clamps the setting to 1…1024 and uses 4 when it is absent or not a number.
  return Number.isFinite(configured) && configured > 0 ? Math.min(configured, 1024) : 4;
}

/** Runs `fdatasync`/`fsync` calls with more of them in flight than libuv's pool allows (see the module comment). */
class SyncScheduler {
  /** Syncs run so far on each path, and the most in flight at once: for tests. */
  readonly counts = { libuv: 0, worker: 0, peakInFlight: 0 };
  #inFlight = 0;
  #libuvBusy = 0;
  readonly #queue: Request[] = [];
  readonly #workers: SyncWorker[] = [];
  /** Set when a worker could not be started: syncs then wait for libuv's pool alone, as Node.js does. */
  #workersUnavailable = false;
  #idleTimer: NodeJS.Timeout | null = null;

  sync(fd: number, full: boolean): Promise<void> {
    this.#inFlight += 1;
    if (this.#inFlight > this.counts.peakInFlight) this.counts.peakInFlight = this.#inFlight;
    return new Promise<void>((resolve, reject) => {
      const request = { fd, full, resolve, reject };
      if (this.#libuvBusy < LIBUV_SLOTS && this.#queue.length === 0) this.#onLibuv(request);
      else {
        this.#queue.push(request);
        this.#dispatch();
      }
    });
  }

  /**
   * Runs `request` on libuv's pool. Its promise is settled from the system call's callback, with the bookkeeping done
   * there too: a durable append's acknowledgement follows the sync by one promise reaction, as an awaited `fdatasync`
   * of its own would, not by a chain of them.
   */
  #onLibuv(request: Request): void {
    this.#libuvBusy += 1;
    this.counts.libuv += 1;
    (request.full ? fs.fsync : fs.fdatasync)(request.fd, (error) => {
      this.#libuvBusy -= 1;
      this.#settle(request, error);
      this.#dispatch();
    });
  }

  /** Settles `request` with its system call's outcome: resolved for `null` (success) only, rejected with anything else. */
  #settle(request: Request, error: unknown): void {
    this.#inFlight -= 1;
    if (error === null) request.resolve();
    else request.reject(error);
  }

  #dispatch(): void {
    while (this.#queue.length > 0) {
      if (this.#libuvBusy < LIBUV_SLOTS) {
        this.#onLibuv(this.#queue.shift() as Request);
        continue;
      }
      const worker = this.#idleWorker();
      if (worker === null) return;
      // Share the queue among the workers that could take some now, so that syncs run side by side.
      const takers = Math.max(
        1,
        this.#idleCount() + (this.#workersUnavailable ? 0 : MAX_WORKERS - this.#workers.length) + 1,
      );
      const share = Math.min(MAX_BATCH, Math.ceil(this.#queue.length / takers));
      worker.batch = this.#queue.splice(0, share);
      this.counts.worker += worker.batch.length;
      worker.answered = 0;
      worker.worker.ref();
      worker.worker.postMessage(worker.batch.map((r) => (r.full ? -r.fd - 1 : r.fd)));
    }
  }

  #idleCount(): number {
    let idle = 0;
    for (const worker of this.#workers) if (worker.batch.length === 0) idle += 1;
    return idle;
  }

  #idleWorker(): SyncWorker | null {
    for (const worker of this.#workers) if (worker.batch.length === 0) return worker;
    if (this.#workersUnavailable || this.#workers.length >= MAX_WORKERS) return null;
    let worker: Worker;
    try {
      // No inherited `execArgv`: loaders and flags of the main thread (a TypeScript loader, `--inspect`) only make the
      // worker slower to start and larger; it runs two `node:fs` calls.
      worker = new Worker(WORKER_SOURCE, { eval: true, execArgv: [] });
    } catch {
      this.#workersUnavailable = true;
      return null;
    }
    const entry: SyncWorker = { worker, batch: [], answered: 0, idleSince: 0 };
    worker.unref();
    worker.on('message', (failure: WorkerFailure | null) => this.#answer(entry, failure));
    worker.on('error', (error) => this.#lose(entry, error));
    worker.on('exit', () => this.#lose(entry, new Error('a sync worker thread exited')));
    this.#workers.push(entry);
    this.#armIdleTimer();
    return entry;
  }

  #answer(entry: SyncWorker, failure: WorkerFailure | null): void {
    const request = entry.batch[entry.answered];
    entry.answered += 1;
    if (entry.answered >= entry.batch.length) {
      entry.batch = [];
      entry.idleSince = Date.now();
      entry.worker.unref();
    }
    if (request !== undefined) this.#settle(request, failure && Object.assign(new Error(failure.message), failure));
    if (entry.batch.length === 0) this.#dispatch();
  }

  /** A worker that failed or exited: its unanswered syncs did not complete, so their callers get an error. */
  #lose(entry: SyncWorker, error: unknown): void {
    const index = this.#workers.indexOf(entry);
    if (index < 0) return;
    this.#workers.splice(index, 1);
    const lost = entry.batch.slice(entry.answered);
    entry.batch = [];
    // Whatever the worker failed with (even nothing), never an acknowledgement.
    const failure = error ?? new Error('a sync worker thread failed');
    for (const request of lost) this.#settle(request, failure);
    this.#dispatch();
  }

  #armIdleTimer(): void {
    if (this.#idleTimer !== null) return;
    this.#idleTimer = setInterval(() => {
      const now = Date.now();
      for (const entry of [...this.#workers]) {
        if (entry.batch.length === 0 && now - entry.idleSince >= IDLE_STOP_MS) {
          this.#workers.splice(this.#workers.indexOf(entry), 1);
          entry.worker.removeAllListeners('exit');
          void entry.worker.terminate();
        }
      }
      if (this.#workers.length === 0 && this.#idleTimer !== null) {
        clearInterval(this.#idleTimer);
        this.#idleTimer = null;
      }
    }, IDLE_STOP_MS);
    this.#idleTimer.unref();
  }
}

const scheduler = new SyncScheduler();

/** `fdatasync(fd)`, run in parallel with other syncs beyond libuv's pool size (see the module comment). */
export function parallelFdatasync(fd: number): Promise<void> {
  return scheduler.sync(fd, false);
}

/** `fsync(fd)`, likewise. */
export function parallelFsync(fd: number): Promise<void> {
  return scheduler.sync(fd, true);
}

/** @internal Syncs run on libuv's pool and on worker threads so far, and the most in flight at once (for tests). */
export function syncSchedulerCounts(): {
  readonly libuv: number;
  readonly worker: number;
  readonly peakInFlight: number;
} {
  return { ...scheduler.counts };
}
