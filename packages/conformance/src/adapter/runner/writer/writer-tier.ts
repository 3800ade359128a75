import type { StartResult } from '../../protocol.js';
import type { CheckRecorder } from '../record.js';
import { byteExactCheck } from './byte-exact.js';
import type { WriterContext } from './context.js';
import { deadHolderLockCheck } from './dead-holder-lock.js';
import { eventCheckpointChecks } from './event-checkpoints.js';
import { eventCompactedStartCheck } from './event-compacted-start.js';
import { eventEpochCheck } from './event-epoch.js';
import { eventSplitCheckpointCheck } from './event-split-checkpoint.js';
import { faultInjectionChecks } from './fault-injection.js';
import { fencedCheck } from './fenced.js';
import { foreignHostLockCheck } from './foreign-host-lock.js';
import { fsyncBeforeAckCheck } from './fsync-before-ack.js';
import { historiesCheck } from './histories.js';
import { invalidRecordCheck, lineTooLongCheck } from './invalid-record.js';
import { killRoundChecks } from './kill-rounds.js';
import { lifecycleChecks } from './lifecycle.js';
import { liveChecks } from './live.js';
import { lockCheck } from './lock.js';
import { lockReplacedCheck } from './lock-replaced.js';
import { expiredLeaseLockCheck, foreignNamespaceLockCheck } from './namespace-locks.js';
import { raceCheck } from './race.js';
import { recoveryCheck } from './recovery.js';
import { repairChecks } from './repair.js';
import { retentionChecks } from './retention.js';
import { runAndStateChecks } from './run-and-state.js';
import { shortWriteCheck } from './short-write.js';
import { fifoCheck, symlinkCheck } from './special-paths.js';
import { storeLinesRecorder } from './store-lines.js';
import { claimsFeature } from './support.js';
import { sweepRecheckCheck } from './sweep-recheck.js';
import { preallocatedSpaceCheck, tornTailCheck } from './torn-tail.js';
import { tracedOpenCloseChecks } from './traced-open-close.js';
import { tracedStoreOpsChecks } from './traced-store-ops.js';
import { unreadableShardCheck } from './turn-unreadable-shard.js';
import { zombieHolderLockCheck } from './zombie-holder-lock.js';

/** Settings of the writer tier. */
export interface WriterTierSettings {
  readonly adapter: string;
  readonly rounds: number;
  readonly seed: number;
  readonly timeoutMs: number;
  readonly timeoutScale: number;
  readonly strace: 'auto' | 'never';
}

/**
 * The writer tier (spec/v1/adapter.md): `writer/claims`, then — when the claim makes a writer testable — every
 * writer check, each on fresh adapter processes.
 */
export async function writerTier(claims: StartResult, settings: WriterTierSettings, recorder: CheckRecorder) {
  const modes = claims.durability.filter((d): d is 'every' | 'group' => d === 'every' || d === 'group');
  const families = claims.families.filter((f) => f === 'turn' || f === 'event');
  let usable = true;
  await recorder.record(
    'writer/claims',
    'a writer supports the every mode and the turn or event family',
    'writer',
    ['TJ-DUR-011', 'TJ-DUR-013'],
    async () => {
      const failures: string[] = [];
      if (!claims.durability.includes('every')) failures.push('durability every is not claimed (TJ-DUR-011)');
      if (families.length === 0) failures.push('the writer tier needs the turn or event family');
      usable = modes.length > 0 && families.length > 0;
      return { failures };
    },
  );
  if (!usable) return;
  const storeLines = claimsFeature(claims, 'store-lines');
  const context: WriterContext = {
    ...settings,
    claims,
    modes,
    recorder: storeLines ? storeLinesRecorder(recorder, claims) : recorder,
    storeLines,
  };
  await killRoundChecks(context);
  await historiesCheck(context);
  await lockCheck(context);
  await tornTailCheck(context);
  await preallocatedSpaceCheck(context);
  await repairChecks(context);
  await foreignHostLockCheck(context);
  await deadHolderLockCheck(context);
  await zombieHolderLockCheck(context);
  await lockReplacedCheck(context);
  await foreignNamespaceLockCheck(context);
  await expiredLeaseLockCheck(context);
  await fencedCheck(context);
  await raceCheck(context);
  await byteExactCheck(context);
  await invalidRecordCheck(context);
  await lineTooLongCheck(context);
  await symlinkCheck(context);
  await fifoCheck(context);
  await fsyncBeforeAckCheck(context);
  await tracedOpenCloseChecks(context);
  await faultInjectionChecks(context);
  await shortWriteCheck(context);
  await lifecycleChecks(context);
  await unreadableShardCheck(context);
  await eventCheckpointChecks(context);
  await eventCompactedStartCheck(context);
  await eventEpochCheck(context);
  await eventSplitCheckpointCheck(context);
  await runAndStateChecks(context);
  await recoveryCheck(context);
  await retentionChecks(context);
  await tracedStoreOpsChecks(context);
  await sweepRecheckCheck(context);
  await liveChecks(context);
}
