import { AdapterFailure, AdapterProcess } from '../process.js';
import type { StartResult } from '../protocol.js';

const MAX_RESTARTS = 5;

/** Starts (and restarts, after a crash or a protocol violation) the adapter under test for the reader tier. */
export class Session {
  #process: AdapterProcess | null = null;
  claims: StartResult | null = null;

  constructor(
    readonly command: string,
    readonly timeoutMs: number,
  ) {}

  #restarts = 0;
  #lastFailure = '';

  async get(): Promise<AdapterProcess> {
    if (this.#process?.usable === true) return this.#process;
    // A crashed or misbehaving adapter is restarted for the next check, but not forever: after a few restarts every
    // later check fails at once instead of spending a process start each.
    if (this.#process !== null) {
      const status = this.#process.exitStatus;
      this.#lastFailure = status === null ? 'protocol violation' : `exit ${status.signal ?? status.code}`;
      if (++this.#restarts > MAX_RESTARTS)
        throw new AdapterFailure(
          'exited',
          `the adapter stopped working ${MAX_RESTARTS + 1} times (last: ${this.#lastFailure}); not restarted again`,
        );
    }
    await this.#process?.dispose();
    const process = AdapterProcess.spawn(this.command, { timeoutMs: this.timeoutMs });
    this.#process = process;
    this.claims = (await process.request('start', { protocol: 1 })) as StartResult;
    return process;
  }

  async dispose(): Promise<void> {
    await this.#process?.dispose();
    this.#process = null;
  }

  async close(): Promise<number | null> {
    const process = this.#process;
    this.#process = null;
    if (process === null || !process.usable) {
      await process?.dispose();
      return null;
    }
    try {
      return await process.stop();
    } finally {
      await process.dispose();
    }
  }
}
