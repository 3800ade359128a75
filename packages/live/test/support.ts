import type { LiveEvent, Subscription } from '@turnjournal/live';

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
