import type { ConversationHub, HubSession } from '@turnjournal/live';
import { createUIMessageStreamResponse, type UIMessage, type UIMessageChunk } from 'ai';
import { followRun } from './follow-run.js';
import { loadChat, resumableRun } from './load-chat.js';
import { persistUIMessageStream } from './persist-stream.js';
import { textOf, UI_MEMBER } from './records.js';

/** What {@link ChatHandlersOptions.respond} gets: the chat as the journal holds it, with the new user message last. */
export interface RespondInput {
  /** The chat (session) id. */
  readonly chatId: string;
  /** The chat's messages from the journal (not the client's copy), ending with `userMessage`. */
  readonly messages: UIMessage[];
  /** The user message of this turn. */
  readonly userMessage: UIMessage;
  /** The request's parsed JSON body (the transport's `body` options are in it). */
  readonly body: Readonly<Record<string, unknown>>;
}

/** Options of {@link createChatHandlers}. */
export interface ChatHandlersOptions {
  /** The hub the chats live in; a chat id is a session id. */
  readonly hub: ConversationHub;
  /**
   * Produces the answer, as a UI message stream (`streamText(...).toUIMessageStream()`, `createUIMessageStream`,
   * ...). Called once the user message is durable; the stream is read to its end whether or not a client listens.
   */
  readonly respond: (input: RespondInput) => ReadableStream<UIMessageChunk> | Promise<ReadableStream<UIMessageChunk>>;
  /** The client id of the acknowledgements the handlers write once a response carried a run's end (`ai-sdk`). */
  readonly clientId?: string;
  /** Told of a failure no response can carry: a generation the journal refused, an acknowledgement that failed. */
  readonly onError?: (error: unknown) => void;
}

/** The route handlers of a durable AI SDK chat (see {@link createChatHandlers}). */
export interface ChatHandlers {
  /**
   * `POST /api/chat`: the `DefaultChatTransport` body → the answer as the SDK's SSE response, from the journal. A
   * request at fault gets a text response: 400 (no chat id, a last message that is not a user message, an id that
   * is not a valid identifier), 409 (another answer of the chat is still being generated), 413 (a message longer
   * than a journal line).
   */
  readonly post: (request: Request) => Promise<Response>;
  /**
   * `GET /api/chat/:id/stream` for `useChat({ resume: true })`: the run to resume (see {@link resumableRun}) from
   * its start, or 204 when there is none; 400 for an id that is not a valid identifier.
   */
  readonly resume: (chatId: string) => Promise<Response>;
  /** The chat's `UIMessage[]` for the first render (see {@link loadChat}). */
  readonly loadChat: (chatId: string) => Promise<UIMessage[]>;
  /** Resolves once every generation these handlers started has ended (for a graceful shutdown and for tests). */
  readonly settled: () => Promise<void>;
}

function problem(status: number, message: string): Response {
  return new Response(`${message}\n`, { status, headers: { 'content-type': 'text/plain; charset=utf-8' } });
}

/** The HTTP status of a refusal that is the request's fault (a bad id, a busy chat, a message too long). */
const STATUS_OF_CODE: Readonly<Record<string, number>> = {
  invalid_request: 400,
  invalid_identifier: 400,
  invalid_record: 400,
  run_active: 409,
  line_too_long: 413,
};

/** `call`'s response, or the refusal of a request at fault as a text response; other failures are rethrown. */
async function answering(call: () => Promise<Response>): Promise<Response> {
  try {
    return await call();
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    const status = typeof code === 'string' ? STATUS_OF_CODE[code] : undefined;
    if (status === undefined) throw error;
    return problem(status, `${code}: ${(error as Error).message}`);
  }
}

/**
 * Route handlers that make an AI SDK chat durable and resumable on a turnjournal hub, with no other store. A send is
 * the turn of the last user message, keyed by its id: that message is durable before `respond` is called, and a
 * retry of it (the same id, after a lost response or a restart) starts nothing and gets the run's answer from the
 * journal. The answer is persisted as it is produced and read to its end when the client goes away; every response —
 * the POST's and a resume's — is the run read back from the journal, so a client never holds a chunk that a crash can
 * take back, and one that reconnects continues where the run is, in the same message.
 */
export function createChatHandlers(options: ChatHandlersOptions): ChatHandlers {
  const { hub, respond } = options;
  const clientId = options.clientId ?? 'ai-sdk';
  const onError = options.onError ?? ((error: unknown) => console.error('@turnjournal/ai-sdk:', error));
  const running = new Set<Promise<void>>();

  const respondWithRun = (session: HubSession, requestId: string, startedSeq: number): Response =>
    createUIMessageStreamResponse({
      stream: followRun(session, requestId, startedSeq, {
        onDelivered: (throughSeq) => {
          session.ack(requestId, { clientId, throughSeq }).catch(onError);
        },
      }),
    });

  const post = (request: Request): Promise<Response> => answering(() => send(request));

  const send = async (request: Request): Promise<Response> => {
    let body: Record<string, unknown>;
    try {
      body = (await request.json()) as Record<string, unknown>;
    } catch (error) {
      if (error instanceof SyntaxError) return problem(400, `the body is not JSON: ${error.message}`);
      throw error;
    }
    const chatId = body?.id;
    const sent = Array.isArray(body?.messages) ? (body.messages as unknown[]) : undefined;
    if (typeof chatId !== 'string') return problem(400, 'the body needs the chat id "id" (a string)');
    const userMessage = sent?.at(-1) as UIMessage | undefined;
    if (userMessage?.role !== 'user' || typeof userMessage.id !== 'string' || !Array.isArray(userMessage.parts))
      return problem(400, 'the last of "messages" must be a user message with an id and parts');
    const session = await hub.session(chatId);
    const turn = await session.send({
      requestId: userMessage.id,
      content: textOf(userMessage),
      messageFields: { [UI_MEMBER]: userMessage },
    });
    if (!turn.created) {
      // A retry: the run of the first send, whatever its state, read back from the journal.
      const run = session.runInfo(turn.requestId);
      if (run === undefined) return problem(409, `turn "${turn.requestId}" has no run to answer with`);
      return respondWithRun(session, turn.requestId, run.startedSeq);
    }
    const started = session.runInfo(turn.requestId)?.startedSeq ?? 0;
    const generation = (async () => {
      const stream = await respond({ chatId, messages: await loadChat(session), userMessage, body });
      await persistUIMessageStream(turn.run, stream, { messageId: `${turn.requestId}.assistant` });
    })().catch(async (error: unknown) => {
      // `respond` threw before a stream existed: the run fails with its message, which the client sees.
      if (session.activeRequestId === turn.requestId)
        await turn.run
          .error({ message: error instanceof Error ? error.message : String(error) })
          .catch((failure: unknown) => onError(failure));
      onError(error);
    });
    const tracked = generation.finally(() => running.delete(tracked));
    running.add(tracked);
    return respondWithRun(session, turn.requestId, started);
  };

  const resume = (chatId: string): Promise<Response> =>
    answering(async () => {
      const session = await hub.session(chatId);
      const run = resumableRun(session);
      if (run === undefined) return new Response(null, { status: 204 });
      return respondWithRun(session, run.requestId, run.startedSeq);
    });

  return {
    post,
    resume,
    loadChat: async (chatId) => loadChat(await hub.session(chatId)),
    settled: async () => {
      while (running.size > 0) await Promise.all(running);
    },
  };
}
