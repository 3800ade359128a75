import type { WriterContext } from './context.js';
import { ackReceiptsCheck } from './live-ack-receipts.js';
import { cancelCheck } from './live-cancel.js';
import { liveDurabilityCheck } from './live-durability.js';
import { epochCheck } from './live-epoch.js';
import { liveInvalidSessionCheck } from './live-invalid-session.js';
import { restartCheck, restartLongTextCheck } from './live-restart.js';
import { restartCheckpointCheck } from './live-restart-checkpoint.js';
import { sessionBoundCheck } from './live-session-bound.js';
import { shutdownCheck } from './live-shutdown.js';
import { snapshotAckCheck } from './live-snapshot-ack.js';
import { snapshotToolsCheck } from './live-snapshot-tools.js';
import { burstCheck, catchUpCheck, subscribeCheck } from './live-subscribe.js';
import { systemMessageCheck } from './live-system-message.js';
import { tokensDurableCheck, tokensSegmentsCheck, tokensSessionCheck } from './live-tokens.js';
import { turnFlowCheck } from './live-turn-flow.js';
import { windowCheckpointsCheck } from './live-window-checkpoints.js';

// The checks of feature `live` (adapter.md §5.7): the implementation's own live sessions, seen through their answers
// and the files they write (spec §18). One module per check; what they share is in live-client.ts.

/** The checks of feature `live` (adapter.md §5.7). */
export async function liveChecks(context: WriterContext): Promise<void> {
  await turnFlowCheck(context);
  await subscribeCheck(context);
  await catchUpCheck(context);
  await epochCheck(context);
  await burstCheck(context);
  await snapshotAckCheck(context);
  await restartCheck(context);
  await restartLongTextCheck(context);
  await restartCheckpointCheck(context);
  await liveDurabilityCheck(context);
  await liveInvalidSessionCheck(context);
  await ackReceiptsCheck(context);
  await cancelCheck(context);
  await systemMessageCheck(context);
  await snapshotToolsCheck(context);
  await tokensDurableCheck(context);
  await tokensSegmentsCheck(context);
  await tokensSessionCheck(context);
  await shutdownCheck(context);
  await sessionBoundCheck(context);
  await windowCheckpointsCheck(context);
}
