// @turnjournal/live/sse: the Server-Sent Events transport of a conversation hub over plain node:http
// (packages/live/README.md, "SSE transport"; spec §18.7). Records go down a GET as events whose id is their seq, so a
// browser's EventSource resumes by itself; sends, cancels and acks go up as POSTs of the WebSocket transport's frames.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from '../transport/http-replies.js';
import { refusal, type SseAnswer, type SseBody, SseEndpoint } from './endpoint.js';
import type { SseEndpointOptions } from './options.js';
import { NodeSseOutput } from './output.js';
import { SSE_HEADERS } from './stream.js';

export type { TransportErrorCode as SseErrorCode } from '../transport/frames.js';
export type { RunStart } from '../transport/host.js';
export {
  createFetchSseTransport,
  type FetchSseRefusal,
  type FetchSseTransport,
  type FetchSseTransportOptions,
} from './fetch.js';
export type { SseEndpointOptions, SseRefusal } from './options.js';

/** Options of {@link createSseTransport}. */
export interface SseTransportOptions extends SseEndpointOptions<IncomingMessage> {
  /** The URL path of the endpoint (GET: the stream, POST: a call); `/sse` by default. Other paths are not handled. */
  readonly path?: string;
  /** Longest wait for a stream's buffer to drain (`write` returned false); then the client is cut off. 10 s. */
  readonly slowClientMs?: number;
}

/** A running SSE transport (see {@link createSseTransport}). */
export interface SseTransport {
  /** Serves `request` when its path is the transport's, and returns true; returns false and leaves it otherwise. */
  handle(request: IncomingMessage, response: ServerResponse): boolean;
  /** Streams open now. */
  readonly connections: number;
  /** Stops taking requests (503) and ends every stream; the hub is left open for the caller to close. */
  close(): Promise<void>;
}

/**
 * Serves a hub's sessions as Server-Sent Events over `node:http` (spec §18.7): a GET on `path` authorized for a
 * session streams the snapshot or the records after the client's cursor (`Last-Event-ID`, else `?lastSeq=`), then
 * live records, each with `id: <seq>`; a POST on `path` takes one frame (`chat.send`, `chat.cancel`, `ack`, with
 * `clientId`) and answers it with the same reply or error as the WebSocket transport. Returns the transport, whose
 * `handle(request, response)` the app's request listener calls.
 */
export function createSseTransport(options: SseTransportOptions): SseTransport {
  const endpoint = new SseEndpoint<IncomingMessage>(options, 'createSseTransport');
  const path = options.path ?? '/sse';

  function handle(request: IncomingMessage, response: ServerResponse): boolean {
    let pathname: string;
    try {
      pathname = new URL(request.url ?? '/', 'http://localhost').pathname;
    } catch (error) {
      if (!(error instanceof TypeError)) throw error;
      return false;
    }
    if (pathname !== path) return false;
    if (request.method === 'GET') openStream(request, response);
    else if (request.method === 'POST') serveFrame(request, response);
    else {
      response.setHeader('Allow', 'GET, POST');
      sendJson(
        response,
        405,
        refusal(405, 'request', 'invalid_request', 'GET opens the stream, POST sends a frame').body,
      );
    }
    return true;
  }

  function openStream(request: IncomingMessage, response: ServerResponse): void {
    const header = request.headers['last-event-id'];
    const asked = { url: request.url ?? '/', lastEventId: typeof header === 'string' ? header : undefined };
    void endpoint
      .openStream(request, asked, () => {
        response.writeHead(200, SSE_HEADERS);
        response.flushHeaders();
        return new NodeSseOutput(response);
      })
      .then((answer) => {
        if (answer !== null) sendJson(response, answer.status, answer.body);
      });
  }

  function serveFrame(request: IncomingMessage, response: ServerResponse): void {
    const declared = Number(request.headers['content-length'] ?? 0);
    void endpoint
      .serveFrame(request, Number.isFinite(declared) ? declared : 0, (max, ms) => readBody(request, max, ms))
      .then((answer) => {
        if (answer !== null) answerFrame(request, response, answer);
      });
  }

  return {
    handle,
    get connections() {
      return endpoint.connections;
    },
    close: () => endpoint.close(),
  };
}

/** Reads a request body of at most `max` bytes within `ms`; never holds more than `max` bytes of it. */
function readBody(request: IncomingMessage, max: number, ms: number): Promise<SseBody> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (body: SseBody): void => {
      clearTimeout(timer);
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('close', onClose);
      resolve(body);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > max) done({ kind: 'too_large' });
      else chunks.push(chunk);
    };
    const onEnd = (): void => done({ kind: 'text', text: Buffer.concat(chunks).toString('utf8') });
    const onClose = (): void => done({ kind: 'aborted' });
    const timer = setTimeout(() => done({ kind: 'timeout' }), ms);
    timer.unref();
    request.on('data', onData);
    request.once('end', onEnd);
    request.once('close', onClose);
  });
}

/**
 * Answers a POST; a request whose body was not read whole (refused, too large, too slow) gets its connection closed,
 * so that the rest of the body is never read or buffered.
 */
function answerFrame(request: IncomingMessage, response: ServerResponse, answer: SseAnswer): void {
  const unread = !request.complete;
  sendJson(response, answer.status, answer.body, unread);
  if (unread) {
    request.pause();
    response.once('finish', () => request.socket.destroySoon());
  }
}
