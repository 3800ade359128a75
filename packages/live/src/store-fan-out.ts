import type { StoreChannel } from '@turnjournal/reader/record-store';
import type { FanOut } from './fanout.js';

/**
 * The hub's fan-out: each announcement goes to `inner` (the application's, or the in-process one) and to the
 * store's channel, which reaches followers in other processes (TJ-LIVE-042). A channel failure is reported, never
 * thrown into the commit that announced: the records are durable whatever the channel does, and followers read the
 * durable end again when they miss an announcement (TJ-STORE-007).
 */
export function storeFanOut(
  inner: FanOut,
  channel: StoreChannel,
  onFailure: (sessionId: string, error: unknown) => void,
): FanOut {
  return {
    publish(sessionId, seq) {
      inner.publish(sessionId, seq);
      channel.publish(sessionId, seq).catch((error: unknown) => onFailure(sessionId, error));
    },
    listen: (sessionId, listener) => inner.listen(sessionId, listener),
  };
}
