// A client's call on its session, shared by the transports: a send (whose created run goes to the app's worker), a
// cancel by request id, an ack in the client's name.
import type { ClientFrame } from './frames.js';
import { errorReply } from './frames.js';
import type { SessionHost } from './host.js';

/** A call frame: any frame but the hello. */
export type CallFrame = Exclude<ClientFrame, { type: 'hello' }>;

/**
 * Serves `frame` for `clientId` on session `sessionId`. Resolves with the reply of a send (`chat.accepted`, or
 * `chat.rejected` with the refusal's code), or null for a cancel or an ack, which answer by their records; a refused
 * cancel or ack rejects with the session's error, for the transport's error reply.
 */
export async function serveCall(
  host: SessionHost,
  sessionId: string,
  clientId: string,
  frame: CallFrame,
): Promise<Record<string, unknown> | null> {
  const session = await host.hub.session(sessionId);
  if (frame.type === 'chat.send') {
    const { requestId, content } = frame;
    try {
      const sent = await session.send({ requestId, content });
      if (sent.created) host.startRun({ session, run: sent.run, sessionId, clientId, content });
      return { type: 'chat.accepted', requestId, created: sent.created, status: sent.status };
    } catch (error) {
      const reply = errorReply(error);
      if (reply.reported) host.report(error, { sessionId, op: frame.type });
      return { type: 'chat.rejected', requestId, code: reply.code, message: reply.message };
    }
  }
  if (frame.type === 'chat.cancel') {
    await session.cancel(frame.requestId, 'client_cancelled');
    return null;
  }
  await session.ack(frame.requestId, {
    clientId,
    ...(frame.throughSeq === undefined ? {} : { throughSeq: frame.throughSeq }),
  });
  return null;
}
