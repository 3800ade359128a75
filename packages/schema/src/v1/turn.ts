import Type, { type Static } from 'typebox';
import { Count, Id, Nullable, OpenEnum } from './common.js';

/** Turn lifecycle event names defined by v1, in rank order (spec §Turn state machine). */
export const TURN_EVENTS = ['submitted', 'worker_started', 'assistant_started', 'completed', 'interrupted'] as const;
/** A turn lifecycle event name defined by v1. */
export type TurnEventName = (typeof TURN_EVENTS)[number];

/** Journal-level turn-family events that are not about one turn. */
export const TURN_JOURNAL_EVENTS = ['compacted'] as const;

/** Known interruption reasons; the set is open. */
export const INTERRUPT_REASONS = ['cancelled', 'rate_limit', 'server_startup_recovery', 'worker_error'] as const;

const version = Type.Literal(1, { description: 'Major version of the turn record format.' });
const createdAt = Type.Number({ description: 'When the event was written: epoch seconds (fractions allowed).' });

function turnEvent<const E extends string>(event: E) {
  return {
    version,
    event: Type.Literal(event),
    turn_id: Id('Turn id; recommended form YYYYMMDDTHHMMSSZ-<12 hex>.'),
    created_at: createdAt,
    session_id: Type.Optional(Id('Session the turn belongs to.')),
    stream_id: Type.Optional(Nullable(Type.String({ description: 'Stream the turn is delivered on.' }))),
  };
}

/** An attachment's metadata; the payload itself is never in the journal. */
export const Attachment = Type.Object(
  {
    name: Type.String({ description: 'File name as the user gave it.' }),
    path: Type.String({ description: 'Where the host stored the file.' }),
    mime: Type.String({ description: 'Media type.' }),
    size: Type.Optional(Count('Size in bytes.')),
    is_image: Type.Optional(Type.Boolean()),
  },
  { title: 'Attachment', description: 'Attachment metadata of a submitted turn.' },
);
/** An attachment's metadata. */
export type Attachment = Static<typeof Attachment>;

/** `submitted`: the user's turn, written and synced before any worker starts. */
export const TurnSubmitted = Type.Object(
  {
    ...turnEvent('submitted'),
    session_id: Id('Session the turn belongs to.'),
    // Optional: a real writer (hermes) omits `role` when its caller gives none, and absent means `user` (TJ-TURN-016).
    role: Type.Optional(OpenEnum(['user'], 'Author of the submitted message; absent means "user".')),
    content: Type.String({ description: 'The exact text the user submitted.' }),
    attachments: Type.Optional(Type.Array(Attachment)),
    workspace: Type.Optional(Nullable(Type.String())),
    model: Type.Optional(Nullable(Type.String())),
    model_provider: Type.Optional(Nullable(Type.String())),
  },
  { title: 'TurnSubmitted', description: 'A user turn as submitted.' },
);
/** A user turn as submitted. */
export type TurnSubmitted = Static<typeof TurnSubmitted>;

/** `worker_started`: a worker picked the turn up. */
export const TurnWorkerStarted = Type.Object(turnEvent('worker_started'), {
  title: 'TurnWorkerStarted',
  description: 'A worker started on the turn.',
});
/** A worker started on the turn. */
export type TurnWorkerStarted = Static<typeof TurnWorkerStarted>;

/** `assistant_started`: assistant output began and was first persisted. */
export const TurnAssistantStarted = Type.Object(
  {
    ...turnEvent('assistant_started'),
    assistant_message_index: Type.Optional(Count("Index of the assistant message in the host's transcript.")),
  },
  { title: 'TurnAssistantStarted', description: 'Assistant output began.' },
);
/** Assistant output began. */
export type TurnAssistantStarted = Static<typeof TurnAssistantStarted>;

/** `completed`: terminal; the answer is saved in the host's transcript. */
export const TurnCompleted = Type.Object(
  {
    ...turnEvent('completed'),
    assistant_message_index: Type.Optional(Nullable(Count("Index of the assistant message in the host's transcript."))),
    terminal: Type.Optional(Type.Boolean()),
  },
  { title: 'TurnCompleted', description: 'The turn completed (terminal).' },
);
/** The turn completed (terminal). */
export type TurnCompleted = Static<typeof TurnCompleted>;

/** `interrupted`: terminal; the turn ended without a complete answer. */
export const TurnInterrupted = Type.Object(
  {
    ...turnEvent('interrupted'),
    reason: OpenEnum(INTERRUPT_REASONS, 'Why the turn was interrupted.'),
    terminal: Type.Optional(Type.Boolean()),
  },
  { title: 'TurnInterrupted', description: 'The turn was interrupted (terminal).' },
);
/** The turn was interrupted (terminal). */
export type TurnInterrupted = Static<typeof TurnInterrupted>;

/** `compacted`: a retention sweep removed whole terminal turns from this journal. */
export const TurnCompacted = Type.Object(
  {
    version,
    event: Type.Literal('compacted'),
    created_at: createdAt,
    removed_turns: Count('How many turns the sweep removed.'),
    removed_turn_ids: Type.Optional(Type.Array(Type.String())),
    retention_seconds: Type.Optional(Type.Number({ minimum: 0, description: 'Retention window the sweep applied.' })),
    session_id: Type.Optional(Id('Session of the journal.')),
  },
  { title: 'TurnCompacted', description: 'A retention sweep removed terminal turns.' },
);
/** A retention sweep removed terminal turns. */
export type TurnCompacted = Static<typeof TurnCompacted>;

/** Any turn-family record defined by v1. */
export type TurnRecord =
  | TurnSubmitted
  | TurnWorkerStarted
  | TurnAssistantStarted
  | TurnCompleted
  | TurnInterrupted
  | TurnCompacted;
