/**
 * How a session tells its subscribers that new records are durable. The message is only "session S is durable through
 * seq N": subscribers then read the records themselves (from the session's memory, or from the store). That is all a
 * database notification channel (PostgreSQL `LISTEN`/`NOTIFY` with the seq as payload) has to carry for hosts that
 * share one store, so it can implement this interface as it is.
 */
export interface FanOut {
  /** Announces that `sessionId` is durable through `seq`. */
  publish(sessionId: string, seq: number): void;
  /** Calls `listener` with each later announcement for `sessionId`; returns the function that stops it. */
  listen(sessionId: string, listener: (seq: number) => void): () => void;
}

/** The in-process {@link FanOut}: a listener set per session, called synchronously. */
export class InProcessFanOut implements FanOut {
  readonly #listeners = new Map<string, Set<(seq: number) => void>>();

  /** @inheritDoc */
  publish(sessionId: string, seq: number): void {
    const listeners = this.#listeners.get(sessionId);
    if (listeners === undefined) return;
    for (const listener of [...listeners]) listener(seq);
  }

  /** @inheritDoc */
  listen(sessionId: string, listener: (seq: number) => void): () => void {
    let listeners = this.#listeners.get(sessionId);
    if (listeners === undefined) {
      listeners = new Set();
      this.#listeners.set(sessionId, listeners);
    }
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0) this.#listeners.delete(sessionId);
    };
  }
}
