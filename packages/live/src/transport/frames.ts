// The frame protocol of the transports (packages/live/README.md, "WebSocket transport", "SSE transport"): what a
// client may send, checked before anything reaches a session, and what an error reply may tell it. The WebSocket
// transport takes these frames on its socket, the SSE transport as POST bodies.
import { LiveError, type LiveErrorCode } from '../errors.js';

/** Codes of a transport's own refusals, besides the {@link LiveErrorCode}s of the session calls. */
export type TransportErrorCode =
  | 'invalid_frame'
  | 'hello_first'
  | 'already_subscribed'
  | 'too_many_subscribers'
  | 'too_many_requests'
  | 'forbidden_session'
  | 'payload_too_large'
  | 'too_many_connections'
  | 'unauthorized'
  | 'internal';

/** A frame a client sent, checked. */
export type ClientFrame =
  | {
      readonly type: 'hello';
      readonly sessionId: string | undefined;
      readonly clientId: string;
      readonly lastSeq: number | null;
      readonly epoch: string | null | undefined;
    }
  | {
      readonly type: 'chat.send';
      readonly requestId: string;
      readonly content: string;
      readonly clientId: string | undefined;
    }
  | { readonly type: 'chat.cancel'; readonly requestId: string; readonly clientId: string | undefined }
  | {
      readonly type: 'ack';
      readonly requestId: string;
      readonly throughSeq: number | undefined;
      readonly clientId: string | undefined;
    };

/** Longest client id a client may name: it is written into every `delivery.ack` of the client (TJ-LIVE-057). */
export const MAX_CLIENT_ID = 128;

/** Checks a client id (1 to {@link MAX_CLIENT_ID} characters), or throws a {@link TransportRefusal} naming `field`. */
export function parseClientId(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_CLIENT_ID)
    refuse(`${field} is a string of 1 to ${MAX_CLIENT_ID} characters`);
  return value;
}

function refuse(message: string): never {
  throw new TransportRefusal('invalid_frame', message);
}

/** A refusal of the transport itself, answered as an error frame. */
export class TransportRefusal extends Error {
  readonly code: TransportErrorCode;
  constructor(code: TransportErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

/** Parses one text frame into a {@link ClientFrame}, or throws a {@link TransportRefusal} (`invalid_frame`). */
export function parseClientFrame(text: string): ClientFrame {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    refuse('a frame is one JSON object');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) refuse('a frame is one JSON object');
  const frame = value as Record<string, unknown>;
  const requestId = frame.requestId;
  // Frames after a hello may name their client (the SSE transport's POSTs must: they have no hello).
  const clientId =
    frame.clientId === undefined ? undefined : parseClientId(frame.clientId, `${String(frame.type)}.clientId`);
  switch (frame.type) {
    case 'hello': {
      const { sessionId, epoch } = frame;
      if (sessionId !== undefined && typeof sessionId !== 'string') refuse('hello.sessionId is a string');
      const helloClient = parseClientId(frame.clientId, 'hello.clientId');
      const lastSeq = frame.lastSeq ?? null;
      if (lastSeq !== null && (!Number.isSafeInteger(lastSeq) || (lastSeq as number) < -1))
        refuse('hello.lastSeq is an integer >= -1 or null');
      if (epoch !== undefined && epoch !== null && typeof epoch !== 'string') refuse('hello.epoch is a string or null');
      return { type: 'hello', sessionId, clientId: helloClient, lastSeq: lastSeq as number | null, epoch };
    }
    case 'chat.send': {
      const content = (frame.payload as { content?: unknown } | null | undefined)?.content;
      if (typeof requestId !== 'string') refuse('chat.send needs a string requestId');
      if (typeof content !== 'string') refuse('chat.send needs payload.content, a string');
      return { type: 'chat.send', requestId, content, clientId };
    }
    case 'chat.cancel':
      if (typeof requestId !== 'string') refuse('chat.cancel needs a string requestId');
      return { type: 'chat.cancel', requestId, clientId };
    case 'ack': {
      const { throughSeq } = frame;
      if (typeof requestId !== 'string') refuse('ack needs a string requestId');
      if (throughSeq !== undefined && !Number.isSafeInteger(throughSeq)) refuse('ack.throughSeq is an integer seq');
      return { type: 'ack', requestId, throughSeq: throughSeq as number | undefined, clientId };
    }
    default:
      return refuse(`unknown frame type ${JSON.stringify(String(frame.type)).slice(0, 40)}`);
  }
}

/**
 * Refusals of a call that concern the caller's own request: their message names only what the client sent, so it
 * is passed on. Any other error (a journal's write failure, a failed session) is answered with its code and a fixed
 * message: those carry server paths, and their cause is the operator's business (`onError`).
 */
const CALLER_REFUSALS: ReadonlySet<LiveErrorCode> = new Set([
  'invalid_request',
  'run_active',
  'run_not_active',
  'unknown_run',
  'run_not_finished',
  'ack_before_finish',
  'ack_beyond_log',
  'request_id_conflict',
  'reserved_session_id',
]);

/** The `{ code, message }` of an error reply for `error`, without server paths, host names or process ids. */
export function errorReply(error: unknown): { code: string; message: string; reported: boolean } {
  if (error instanceof TransportRefusal) return { code: error.code, message: error.message, reported: false };
  if (error instanceof LiveError && CALLER_REFUSALS.has(error.code))
    return { code: error.code, message: error.message, reported: false };
  if (error instanceof LiveError && error.code === 'session_closed')
    return { code: error.code, message: 'the session is closed; reconnect', reported: false };
  if (error instanceof LiveError && error.code === 'too_many_sessions')
    return {
      code: error.code,
      message: 'the server has as many busy sessions open as it allows; retry later',
      reported: false,
    };
  if (error instanceof LiveError && error.code === 'session_failed')
    return { code: error.code, message: 'the session failed; reconnect, which reopens it', reported: true };
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^[a-z][a-z_]{0,39}$/.test(code))
    return { code, message: `the server refused the request (${code})`, reported: true };
  return { code: 'internal', message: 'the server could not complete the request', reported: true };
}

/** The `requestId` of a frame's text, when it is a short string, to name the request an error reply answers. */
export function requestIdOf(text: string): { requestId?: string } {
  try {
    const id = (JSON.parse(text) as { requestId?: unknown } | null)?.requestId;
    return typeof id === 'string' && id.length <= 128 ? { requestId: id } : {};
  } catch (error) {
    if (error instanceof SyntaxError) return {};
    throw error;
  }
}
