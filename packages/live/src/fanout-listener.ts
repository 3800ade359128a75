import type { LiveEvent } from './records.js';
import type { Subscription } from './subscription.js';

/** Most events handed to a listener in one call: what a listener catching up holds at once. */
const MAX_EVENTS_PER_CALL = 4096;

/** Called with the next events of a {@link Listening}, in order: each record once, as {@link Subscription} yields them. */
export type LiveListener = (events: readonly LiveEvent[]) => void;

/**
 * A subscription delivered by callback (issue 39), beside the async iterator of {@link Subscription}: the same events
 * in the same order, but every record that is ready at once (a group commit's, a batch read from the store) goes to
 * the listener in one call, so a thousand subscribers of a streaming session cost a call each per commit rather than a
 * promise each per record.
 */
export class Listening {
  readonly #subscription: Subscription;
  /**
   * Settles when the stream ends: fulfilled once it is closed (by {@link close}, a `cut_off` event, or the end of the
   * session), rejected with the error that ended it (a failed read from the store, or one the listener threw; the
   * subscription is closed then). Observe it: an unobserved rejection is the process's unhandled rejection.
   */
  readonly done: Promise<void>;

  /** @internal use `session.listen()`. */
  constructor(subscription: Subscription, listener: LiveListener) {
    this.#subscription = subscription;
    this.done = this.#drive(listener);
  }

  /** The last seq the listener received (the `after` it started from until it received one). */
  get cursor(): number {
    return this.#subscription.cursor;
  }

  /** Stops delivering; {@link done} fulfils. */
  close(): void {
    this.#subscription.close();
  }

  async #drive(listener: LiveListener): Promise<void> {
    const subscription = this.#subscription;
    try {
      for (;;) {
        const first = await subscription.next();
        if (first.done === true) return;
        listener(subscription.takeReady(first.value, MAX_EVENTS_PER_CALL));
      }
    } catch (error) {
      subscription.close();
      throw error;
    }
  }
}
