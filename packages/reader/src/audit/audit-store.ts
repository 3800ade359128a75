import { type Finding, makeFinding } from '@turnjournal/schema';
import {
  type CheckSource,
  type CheckStoreOptions,
  checkStoreListing,
  contentsOf,
  type StoreCheck,
} from '../store/check-store.js';
import { FindingSink } from '../store/finding-sink.js';
import { turnsOf } from '../store/session-folds.js';
import type { StoreContents } from '../store/store-contents.js';
import type { RecordLocation } from '../turn/representative.js';
import { type HostView, LazyRecoveryPlan, type RecoveryPlan } from './plan-recovery.js';

/** Options of {@link auditStore}. */
export interface AuditStoreOptions extends Omit<CheckStoreOptions, 'keepTurns'> {
  /** What the host's transcript holds; without it, interruption markers are not checked and every step is planned. */
  readonly host?: HostView;
}

/** The audit of a store: the check with the audit findings added, and the recovery plan. */
export interface StoreAudit {
  /** The check, whose findings include `turn_journal_*` and `stale_lock`. */
  readonly check: StoreCheck;
  /** The recovery plan for every abandoned turn, each built when an iteration reaches it. */
  readonly plan: RecoveryPlan;
  /** Turn journal files a live (or not provably dead) writer holds. */
  readonly heldFiles: readonly string[];
}

const MALFORMED_EVENT_SOURCES = new Set(['malformed_line', 'zero_filled_region', 'oversized_line', 'invalid_record']);

/**
 * Audits a store (spec §13.2) — files under paths, or a record store's journals (spec §19) — without modifying
 * anything (TJ-AUDIT-010): the check, the session-level `turn_journal_*` findings of seed 000, stale locks, and the
 * recovery plan (spec §12).
 */
export async function auditStore(source: CheckSource, options: AuditStoreOptions = {}): Promise<StoreAudit> {
  return auditStoreListing(contentsOf(source), options, false);
}

/**
 * {@link auditStore}, whose check's sessions, when `listTurns` is true, have empty `turns` (but for sessions of a few
 * turns) and give their turns on iteration through `turnsOf` (session-folds.ts) instead: the same findings and plan,
 * without an object per turn, for an internal caller that prints the findings and the plan, not the turns
 * (`turnjournal audit` and `recover`; issue 11: two million orphan records). Internal to the reader.
 */
export async function auditStoreListing(
  contents: StoreContents,
  options: AuditStoreOptions,
  listTurns: boolean,
): Promise<StoreAudit> {
  // The plan and the pending-turn findings are made from the turns: an audit always keeps them.
  const check = await checkStoreListing(contents, { ...options, keepTurns: true }, listTurns);
  const sink = new FindingSink(options.maxFindingsPerCode, options.maxFindingsPerCodeInStore);
  // What the check left out stays counted: the audit's report states every omission (TJ-AUDIT-013, TJ-AUDIT-016).
  sink.addOmitted(check.omitted);
  for (const finding of check.findings) sink.add(finding);

  const held = new Set<string>();
  // The turn journals that a malformed-line finding names (the findings are capped, so a few): a set of every turn
  // journal, looked up for those few, cost a store of 100,000 sessions megabytes (issue 11).
  const malformedTurnFiles = new Set<string>();
  const malformedIn = new Set<string>();
  for (const finding of check.findings)
    if (finding.file !== undefined && MALFORMED_EVENT_SOURCES.has(finding.code)) malformedIn.add(finding.file);
  for (const { path: file, family } of check.files) {
    if (family !== 'turn') continue;
    if (malformedIn.has(file)) malformedTurnFiles.add(file);
    const status = await contents.ownerStatus(file);
    if (status === 'live' || status === 'unproven') held.add(file);
    if (status === 'stale')
      sink.add(
        makeFinding('stale_lock', 'the writer lock names a process that no longer runs; a writer will take it over', {
          file: `${file}.lock`,
        }),
      );
    if (status === 'expired')
      sink.add(
        makeFinding(
          'stale_lock',
          'the writer lock names a process of another PID namespace whose lease expired; a writer will take it over once it has seen no renewal for the lease period',
          { file: `${file}.lock` },
        ),
      );
  }
  for (const finding of check.findings) {
    if (
      finding.file !== undefined &&
      malformedTurnFiles.has(finding.file) &&
      MALFORMED_EVENT_SOURCES.has(finding.code)
    ) {
      const { file, line, offset } = finding;
      sink.add(
        makeFinding(
          'turn_journal_malformed_event',
          `a turn journal line yields no accepted record (${finding.code}); review it by hand`,
          { file, line, offset },
        ),
      );
    }
  }
  // A finding per pending or interrupted turn, built only while the caps keep it: a store of two million abandoned
  // turns keeps 10,000 and counts the rest (issue 11).
  for (const session of check.sessions) {
    for (const turn of turnsOf(session)) {
      const file = turn.files[0];
      const where = () => ({ session_id: turn.sessionId, turn_id: turn.turnId, file });
      if (!turn.terminal)
        sink.addBuilt('turn_journal_pending_turn', file, () =>
          pendingFinding(
            turn.files.some((f) => held.has(f)),
            turn.state,
            where(),
          ),
        );
      else if (turn.state === 'interrupted')
        sink.addBuilt('turn_journal_interrupted_turn', file, () =>
          interruptedFinding(options.host?.hasInterruptionMarker(turn.sessionId, turn.turnId), where()),
        );
    }
  }
  // Built on iteration from the derived turns the check holds anyway (see RecoveryPlan). A store read asynchronously
  // reads ahead the submitted records the plan restores; a file is read back when a step's `submitted` is read.
  await contents.preload(submittedOfAbandoned(check, held));
  const load = (location: RecordLocation) => contents.loadRecord(location);
  const plan = new LazyRecoveryPlan(check.sessions, held, options.host, load, turnsOf);
  return { check: { ...check, findings: sink.findings, omitted: sink.omitted }, plan, heldFiles: [...held].sort() };
}

function pendingFinding(isHeld: boolean, state: string, where: Parameters<typeof makeFinding>[2]): Finding {
  const finding = makeFinding('turn_journal_pending_turn', '', where);
  return isHeld
    ? {
        ...finding,
        severity: 'info',
        repairable: false,
        message: `turn is ${state} and a live writer holds its journal`,
      }
    : { ...finding, message: `turn is ${state} and its writer is gone: recovery will close it as interrupted` };
}

function interruptedFinding(hasMarker: boolean | undefined, where: Parameters<typeof makeFinding>[2]): Finding {
  const finding = makeFinding('turn_journal_interrupted_turn', '', where);
  if (hasMarker === false)
    return {
      ...finding,
      severity: 'warn',
      repairable: true,
      message: 'turn was interrupted and the host shows no interruption marker',
    };
  const detail =
    hasMarker === true ? 'the host shows its interruption marker' : 'the host transcript was not consulted';
  return { ...finding, message: `turn was interrupted; ${detail}` };
}

/** Where the `submitted` record of each abandoned turn is (TJ-RECOV-002): what the plan's steps may read back. */
function* submittedOfAbandoned(check: StoreCheck, held: ReadonlySet<string>): Generator<RecordLocation> {
  for (const session of check.sessions)
    for (const turn of turnsOf(session)) {
      if (turn.terminal || turn.files.some((file) => held.has(file))) continue;
      const submitted = turn.events.submitted;
      if (submitted !== undefined) yield submitted.location;
    }
}
