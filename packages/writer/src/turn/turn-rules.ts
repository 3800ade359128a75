import type { TurnEventName } from '@turnjournal/schema';
import { WriterError } from '../errors.js';
import type { SubmitInput, SubmitResult } from './turn-journal-inputs.js';
import { contentDigest, isTerminal, type KnownTurn, submittedDigest, TURN_RANK } from './turn-table.js';

// The per-turn rules of a turn-journal writer (spec §10): what a submission and each later step of one turn write, and
// which of them are refused. Each refusal is a WriterError naming `file`, the journal.

/** The members of a `submitted` record that `SubmitInput.extra` may not redefine. */
const SUBMIT_MEMBERS = new Set([
  'version',
  'event',
  'turn_id',
  'session_id',
  'stream_id',
  'created_at',
  'role',
  'content',
  'attachments',
  'workspace',
  'model',
  'model_provider',
]);

/** The `submitted` record of `input` for turn `turnId` of session `sessionId`, created now by `clock`. */
export function submittedRecord(
  sessionId: string,
  turnId: string,
  input: SubmitInput,
  clock: () => number,
  file: string,
): Record<string, unknown> {
  const extra = input.extra ?? {};
  for (const key of Object.keys(extra))
    if (SUBMIT_MEMBERS.has(key))
      throw new WriterError('invalid_record', `extra member "${key}" would redefine a submitted field`, file);
  const record: Record<string, unknown> = {
    version: 1,
    event: 'submitted',
    turn_id: turnId,
    session_id: sessionId,
    ...(input.streamId === undefined ? {} : { stream_id: input.streamId }),
    created_at: clock() / 1000,
    role: input.role ?? 'user',
    content: input.content,
    ...(input.attachments === undefined ? {} : { attachments: input.attachments }),
    ...(input.workspace === undefined ? {} : { workspace: input.workspace }),
    ...(input.model === undefined ? {} : { model: input.model }),
    ...(input.modelProvider === undefined ? {} : { model_provider: input.modelProvider }),
    ...extra,
  };
  return record;
}

/**
 * The answer to a submission of a turn id the writer already knows: a retry of the same content writes nothing and
 * answers `created: false`; other content is a `turn_id_conflict` (TJ-TURN-003); a turn known without its
 * `submitted` record (an orphan) cannot be submitted now (`illegal_transition`).
 */
export function retriedSubmission(turnId: string, known: KnownTurn, content: string, file: string): SubmitResult {
  const digest = submittedDigest(known);
  if (digest === null || known.state === null)
    throw new WriterError(
      'illegal_transition',
      `turn ${turnId} already has events but no submitted record (an orphan); it cannot be submitted now`,
      file,
    );
  if (digest !== contentDigest(content))
    throw new WriterError(
      'turn_id_conflict',
      `turn ${turnId} was already submitted with different content; a turn id names one turn (TJ-TURN-003)`,
      file,
    );
  return { turnId, created: false, state: known.state };
}

/**
 * Refuses, with `illegal_transition`, a step of a turn that would come after a terminal event or be a step backwards
 * or a repeat (spec §10.1).
 */
export function checkTransition(turnId: string, turn: KnownTurn, event: TurnEventName, file: string): void {
  const state = turn.state;
  if (state === null) return;
  if (isTerminal(state))
    throw new WriterError(
      'illegal_transition',
      `turn ${turnId} is already ${state}; nothing may follow a terminal event`,
      file,
    );
  if (!isTerminal(event) && TURN_RANK[event] <= TURN_RANK[state])
    throw new WriterError(
      'illegal_transition',
      `turn ${turnId} is ${state}; "${event}" would be a step backwards or a repeat`,
      file,
    );
}

/**
 * The record of a later step `event` of a known turn, created now by `clock`: its envelope (with the turn's
 * `stream_id`) and `members`.
 */
export function stepRecord(
  sessionId: string,
  turnId: string,
  turn: KnownTurn,
  event: TurnEventName,
  members: Record<string, unknown>,
  clock: () => number,
): Record<string, unknown> {
  return {
    version: 1,
    event,
    turn_id: turnId,
    session_id: sessionId,
    ...(turn.streamId === undefined ? {} : { stream_id: turn.streamId }),
    created_at: clock() / 1000,
    ...members,
  };
}

/** The `assistant_message_index` member, when an index (or null) is given. */
export function indexMember(index: number | null | undefined): Record<string, unknown> {
  return index === undefined ? {} : { assistant_message_index: index };
}
