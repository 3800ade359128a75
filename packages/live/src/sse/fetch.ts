// The SSE transport over the Fetch API: a `Request` in, a `Response` out, for servers that speak it (Next.js route
// handlers, Hono, Deno- and Bun-style `fetch` handlers). The same endpoint as the node:http transport serves it, so
// cursors, limits, backpressure and replies are the same; only the reading of a body and the stream's output differ.
import { positive } from '../transport/host.js';
import { refusal, type SseAnswer, type SseBody, SseEndpoint } from './endpoint.js';
import type { SseEndpointOptions, SseRefusal } from './options.js';
import { FetchSseOutput } from './output.js';
import { SSE_HEADERS } from './stream.js';

/** An `authorize` refusal of {@link createFetchSseTransport}: answered with this HTTP status and message. */
export type FetchSseRefusal = SseRefusal;

/** Options of {@link createFetchSseTransport}: those of `createSseTransport`, with Fetch's `Request`. */
export interface FetchSseTransportOptions extends SseEndpointOptions<Request> {
  /**
   * The URL path served (GET: the stream, POST: a call); any other is answered 404. Unset by default: the framework's
   * routing decides which requests reach {@link FetchSseTransport.fetch}.
   */
  readonly path?: string;
  /** Bytes a stream's body queues before the next record waits for the server to take them. 64 KiB by default. */
  readonly highWaterBytes?: number;
  /** Longest wait for a stream's body to drain below `highWaterBytes`; then the client is cut off. 10 s by default. */
  readonly slowClientMs?: number;
}

/** A running Fetch SSE transport (see {@link createFetchSseTransport}). */
export interface FetchSseTransport {
  /** Answers `request`: a GET with the event stream (or a refusal), a POST with the call's reply. */
  fetch(request: Request): Promise<Response>;
  /** Streams open now. */
  readonly connections: number;
  /** Stops taking requests (503) and ends every stream; the hub is left open for the caller to close. */
  close(): Promise<void>;
}

/**
 * Serves a hub's sessions as Server-Sent Events over Fetch `Request` → `Response` (spec §18.7), exactly as
 * `createSseTransport` does over `node:http`: a GET streams the snapshot or the records after the client's cursor
 * (`Last-Event-ID`, else `?lastSeq=`), each record an event whose id is its seq; a POST takes one call frame. Returns
 * the transport, whose `fetch(request)` a route handler returns (`export const GET = (r) => sse.fetch(r)`).
 */
export function createFetchSseTransport(options: FetchSseTransportOptions): FetchSseTransport {
  const endpoint = new SseEndpoint<Request>(options, 'createFetchSseTransport');
  const highWaterBytes = positive(options.highWaterBytes, 64 << 10, 'highWaterBytes');
  const path = options.path;

  async function fetch(request: Request): Promise<Response> {
    if (path !== undefined && new URL(request.url).pathname !== path) {
      await request.body?.cancel();
      return jsonResponse(refusal(404, 'request', 'invalid_request', 'not found'));
    }
    if (request.method === 'GET') {
      let output: FetchSseOutput | null = null;
      const answer = await endpoint.openStream(
        request,
        { url: request.url, lastEventId: request.headers.get('last-event-id') ?? undefined },
        () => {
          output = new FetchSseOutput(highWaterBytes);
          return output;
        },
      );
      if (answer !== null) return jsonResponse(answer);
      const opened = output as FetchSseOutput | null;
      if (opened === null) throw new Error('the SSE endpoint opened a stream without an output');
      return new Response(opened.body, { status: 200, headers: SSE_HEADERS });
    }
    if (request.method === 'POST') {
      const declared = Number(request.headers.get('content-length') ?? 0);
      const answer = await endpoint.serveFrame(request, Number.isFinite(declared) ? declared : 0, (max, ms) =>
        readBody(request, max, ms),
      );
      // A client that left before its body arrived gets no answer; the framework drops the response.
      if (answer === null) return new Response(null, { status: 499 });
      if (!request.bodyUsed) await request.body?.cancel().catch(ignoreCancelFailure);
      return jsonResponse(answer);
    }
    await request.body?.cancel();
    return jsonResponse(refusal(405, 'request', 'invalid_request', 'GET opens the stream, POST sends a frame'), {
      Allow: 'GET, POST',
    });
  }

  return {
    fetch,
    get connections() {
      return endpoint.connections;
    },
    close: () => endpoint.close(),
  };
}

/**
 * Reads a Fetch request's body, at most `max` bytes within `ms`: a larger or slower body is cancelled, never held
 * beyond the bound.
 */
async function readBody(request: Request, max: number, ms: number): Promise<SseBody> {
  if (request.body === null) return { kind: 'text', text: '' };
  const reader = request.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let size = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ms);
  });
  try {
    for (;;) {
      let next: Awaited<ReturnType<typeof reader.read>> | 'timeout';
      try {
        next = await Promise.race([reader.read(), timedOut]);
      } catch (error) {
        // The body stream errors when its client went away mid-body (the server's abort or reset error).
        if (error instanceof Error) return { kind: 'aborted' };
        throw error;
      }
      if (next === 'timeout') {
        await reader.cancel().catch(ignoreCancelFailure);
        return { kind: 'timeout' };
      }
      if (next.done) return { kind: 'text', text: text + decoder.decode() };
      size += next.value.byteLength;
      if (size > max) {
        await reader.cancel().catch(ignoreCancelFailure);
        return { kind: 'too_large' };
      }
      text += decoder.decode(next.value, { stream: true });
    }
  } finally {
    clearTimeout(timer);
  }
}

/** A body that cannot be cancelled was already closed or errored: there is nothing left to refuse reading. */
function ignoreCancelFailure(error: unknown): void {
  if (!(error instanceof TypeError)) throw error;
}

function jsonResponse(answer: SseAnswer, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(answer.body), {
    status: answer.status,
    headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', ...headers },
  });
}
