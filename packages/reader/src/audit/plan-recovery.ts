import type { DerivedTurn } from '../turn/derive-turns.js';
import { loadRecord, type RecordLocation } from '../turn/representative.js';

/** What the host says its transcript already holds for a turn (seed 000's sidecar). */
export interface HostView {
  /** True when the host transcript already has the turn's submitted user message. */
  hasUserMessage(sessionId: string, turnId: string): boolean;
  /** True when the host transcript already has an interruption marker for the turn. */
  hasInterruptionMarker(sessionId: string, turnId: string): boolean;
}

/** One step of recovering an abandoned turn (spec §12), in the order a writer applies them (TJ-RECOV-003). */
export type RecoveryAction =
  | {
      readonly kind: 'ensure_user_message';
      /**
       * The submitted record to restore into the host transcript, with a recovery marker. Read back from the journal
       * on each access, and not kept: a plan of many abandoned turns holds where their messages are, not the messages
       * (each can be as large as the line limit). Throws `ReaderError` `record_moved` if the file changed since.
       */
      readonly submitted: Readonly<Record<string, unknown>>;
    }
  | { readonly kind: 'ensure_interruption_marker' }
  | {
      readonly kind: 'append_interrupted';
      /** The record to append (without `created_at`, which the writer stamps). */
      readonly record: {
        readonly version: 1;
        readonly event: 'interrupted';
        readonly turn_id: string;
        readonly session_id: string;
        readonly reason: 'server_startup_recovery';
        readonly stream_id?: string;
      };
    };

/** The recovery of one abandoned turn. */
export interface TurnRecovery {
  /** The session. */
  readonly sessionId: string;
  /** The turn. */
  readonly turnId: string;
  /** Its state before recovery. */
  readonly state: string;
  /** The steps, in order. */
  readonly actions: readonly RecoveryAction[];
}

/**
 * Computes the recovery plan (spec §12) as a pure function of the derived turns, the files a live writer holds, and
 * what the host's transcript holds (TJ-RECOV-001). Exactly the abandoned turns are planned (TJ-RECOV-002); the plan
 * never contains an assistant answer or a provider call (TJ-RECOV-004, TJ-RECOV-005). Without a host view every
 * `ensure_*` step is planned: host hooks are idempotent (TJ-RECOV-008), so planning them is always safe. The submitted
 * record to restore is read back from the journal with `load` when an `ensure_user_message` action's `submitted` is
 * read, not while planning: an audit that only reports the plan reads no message back.
 */
export function planRecovery(
  turns: readonly DerivedTurn[],
  heldFiles: ReadonlySet<string>,
  host?: HostView,
  load: (location: RecordLocation) => Record<string, unknown> = loadRecord,
): TurnRecovery[] {
  const plan: TurnRecovery[] = [];
  for (const turn of turns) {
    if (turn.terminal || turn.files.some((file) => heldFiles.has(file))) continue;
    const actions: RecoveryAction[] = [];
    const submitted = turn.events.submitted;
    if (submitted !== undefined && !(host?.hasUserMessage(turn.sessionId, turn.turnId) ?? false)) {
      const { location } = submitted;
      actions.push({
        kind: 'ensure_user_message',
        get submitted() {
          return load(location);
        },
      });
    }
    if (!(host?.hasInterruptionMarker(turn.sessionId, turn.turnId) ?? false))
      actions.push({ kind: 'ensure_interruption_marker' });
    const streamId = submitted?.summary.streamId;
    actions.push({
      kind: 'append_interrupted',
      record: {
        version: 1,
        event: 'interrupted',
        turn_id: turn.turnId,
        session_id: turn.sessionId,
        reason: 'server_startup_recovery',
        ...(typeof streamId === 'string' ? { stream_id: streamId } : {}),
      },
    });
    plan.push({ sessionId: turn.sessionId, turnId: turn.turnId, state: turn.state, actions });
  }
  return plan;
}
