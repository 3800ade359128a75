import Type, { type Static } from 'typebox';
import { Count, Id, Message, Meta, Timestamp } from './common.js';

/** A session state snapshot for resume: one JSON document, replaced atomically (seed 004 §3.1). */
export const SessionState = Type.Object(
  {
    schema_version: Type.Literal(1, { description: 'Major version of the state format.' }),
    session_id: Id('Session the snapshot belongs to.'),
    updated_at: Timestamp('When the snapshot was written.'),
    run_id: Type.Optional(Id('Last run id.')),
    invoke_seq: Type.Optional(Count('Last LLM invocation seq.')),
    messages: Type.Array(Message),
    meta: Type.Optional(Meta),
  },
  { title: 'SessionState', description: 'Session state snapshot for resume.' },
);
/** A session state snapshot for resume. */
export type SessionState = Static<typeof SessionState>;
