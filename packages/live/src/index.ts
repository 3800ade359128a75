// @turnjournal/live: live sessions over a turnjournal store (spec §18; seeds 000, 001, 003).
export * from './errors.js';
export * from './fanout.js';
export { Listening, type LiveListener } from './fanout-listener.js';
export { FollowerSession } from './follower-session.js';
export * from './hub.js';
export { type LiveClock, systemClock } from './live-clock.js';
export * from './records.js';
export * from './session.js';
export type { SubscriptionSource } from './subscription.js';
export { Subscription } from './subscription.js';
