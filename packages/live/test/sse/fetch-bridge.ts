// What a framework does around a Fetch handler, as the Fetch front end's server in these tests: node:http on
// 127.0.0.1, a `Request` built from the incoming message, the `Response` written back with backpressure.
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Answers `req` with `handler`'s `Response`, pulling each body chunk only once the socket took the previous one. */
export async function serveFetch(
  handler: (request: Request) => Promise<Response>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) for (const one of value) headers.append(name, one);
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  const body = { cancelled: false };
  const request = new Request(`http://127.0.0.1${req.url ?? '/'}`, {
    method: req.method ?? 'GET',
    headers,
    ...(hasBody ? { body: bodyStream(req, res, body), duplex: 'half' } : {}),
  } as RequestInit);
  const response = await handler(request);
  // An unread body makes the connection unusable for the next request: the client is told not to reuse it.
  const sent: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    sent[name] = value;
  });
  res.writeHead(response.status, {
    ...sent,
    ...(body.cancelled ? { Connection: 'close' } : {}),
  });
  res.flushHeaders();
  if (response.body === null) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  let finished = false;
  // The client left: the body is cancelled, which ends the transport's stream.
  res.once('close', () => {
    if (finished) return;
    reader.cancel().catch((error: unknown) => {
      // A body the transport had cut off (errored) while this waited for the socket rejects the cancel with its error.
      if (!(error instanceof Error)) throw error;
    });
  });
  for (;;) {
    let next: Awaited<ReturnType<typeof reader.read>>;
    try {
      next = await reader.read();
    } catch (error) {
      // The transport cut the stream off (it errors the body): the socket goes, with what it held.
      if (!(error instanceof Error)) throw error;
      finished = true;
      res.destroy();
      return;
    }
    if (next.done) {
      finished = true;
      break;
    }
    if (res.destroyed) return;
    // Backpressure as a framework keeps it: the next chunk is pulled only once the socket took this one.
    if (!res.write(next.value))
      await new Promise<void>((resolve) => {
        const done = (): void => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.once('drain', done);
        res.once('close', done);
      });
  }
  res.end();
}

/**
 * The request body as a byte stream pulled from `req`. A cancel (the transport refused the body) stops reading it and
 * closes the connection once the answer is sent, so the rest is never read (Node 20's `Readable.toWeb` enqueues after
 * a cancel and throws).
 */
function bodyStream(
  req: IncomingMessage,
  res: ServerResponse,
  state: { cancelled: boolean },
): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        req.on('data', (chunk: Buffer) => {
          if (state.cancelled) return;
          controller.enqueue(new Uint8Array(chunk));
          if ((controller.desiredSize ?? 0) <= 0) req.pause();
        });
        req.once('end', () => {
          if (!state.cancelled) controller.close();
        });
        req.once('error', (error) => {
          if (!state.cancelled) controller.error(error);
        });
        req.once('close', () => {
          if (!state.cancelled && !req.complete) controller.error(new Error('the client left mid-body'));
        });
      },
      pull() {
        req.resume();
      },
      cancel() {
        state.cancelled = true;
        req.pause();
        res.once('finish', () => req.socket.destroySoon());
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: 64 * 1024 }),
  );
}
