// One connection of a client to its server, over either transport: the WebSocket transport (frames both ways on one
// socket) or the SSE transport (frames down a GET's event stream, calls up as POSTs whose answers are frames too).

/** What the client needs of a WebSocket: the browser's, Node 22's, or the `ws` package's. */
export interface WebSocketLike {
  /** 0 connecting, 1 open, 2 closing, 3 closed. */
  readonly readyState: number;
  /** Called once open. */
  onopen: ((event: never) => void) | null;
  /** Called with each message (`event.data`: the text). */
  onmessage: ((event: never) => void) | null;
  /** Called once closed, whatever the cause. */
  onclose: ((event: never) => void) | null;
  /** Called on an error (a close follows). */
  onerror: ((event: never) => void) | null;
  /** Sends one text frame. */
  send(data: string): void;
  /** Starts the closing handshake. */
  close(code?: number, reason?: string): void;
}

/** A WebSocket constructor. */
export type WebSocketConstructor = new (url: string) => WebSocketLike;

/** The platform's `fetch`, or one with the same shape. */
export type FetchFunction = typeof fetch;

/** Where a link starts its subscription. */
export interface LinkStart {
  readonly clientId: string;
  readonly lastSeq: number | null;
  readonly epoch: string | null | undefined;
  readonly connectTimeoutMs: number;
}

/** What a link reports to its client. */
export interface LinkEvents {
  /** A frame arrived (null: text that is not a JSON object). */
  frame(frame: Record<string, unknown> | null): void;
  /** The connection is gone; called once, and never after `close()`. */
  dropped(): void;
}

/** One connection. */
export interface Link {
  /** True while a call sent now reaches the server. */
  readonly ready: boolean;
  /** Sends a call frame (`chat.send`, `chat.cancel`, `ack`); its answer arrives as a frame. */
  send(frame: Record<string, unknown>): void;
  /** Ends the connection without reporting `dropped`. */
  close(): void;
}

/** Opens a WebSocket link: hello with the cursor once open, then frames both ways. */
export function openWebSocketLink(
  WebSocket: WebSocketConstructor,
  url: string,
  start: LinkStart,
  events: LinkEvents,
): Link {
  const socket = new WebSocket(url);
  let ended = false;
  const end = (): void => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    socket.onopen = socket.onmessage = socket.onclose = null;
    socket.close();
  };
  const drop = (): void => {
    if (ended) return;
    end();
    events.dropped();
  };
  const timer = setTimeout(() => {
    if (socket.readyState === 0) drop();
  }, start.connectTimeoutMs);
  socket.onopen = () => {
    clearTimeout(timer);
    socket.send(
      JSON.stringify({
        type: 'hello',
        clientId: start.clientId,
        lastSeq: start.lastSeq,
        ...(start.epoch === undefined ? {} : { epoch: start.epoch }),
      }),
    );
  };
  socket.onmessage = ((event: { data: unknown }) => {
    if (!ended) events.frame(parseFrame(event.data));
  }) as (event: never) => void;
  socket.onclose = drop;
  // An error is followed by a close, which drops the link.
  socket.onerror = () => undefined;
  return {
    get ready() {
      return !ended && socket.readyState === 1;
    },
    send(frame) {
      if (!ended && socket.readyState === 1) socket.send(JSON.stringify(frame));
    },
    close: end,
  };
}

/**
 * Opens an SSE link: a GET of `url` with the client and its cursor as query parameters, read as an event stream, and
 * a POST to `url` per call, naming the client, whose JSON answer is handed on as a frame.
 */
export function openSseLink(fetchImpl: FetchFunction, url: string, start: LinkStart, events: LinkEvents): Link {
  const controller = new AbortController();
  let ended = false;
  let streaming = false;
  const end = (): void => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    controller.abort();
  };
  const drop = (): void => {
    if (ended) return;
    end();
    events.dropped();
  };
  const timer = setTimeout(() => {
    if (!streaming) drop();
  }, start.connectTimeoutMs);
  const query: Record<string, string> = { clientId: start.clientId };
  if (start.lastSeq !== null) query.lastSeq = String(start.lastSeq);
  if (typeof start.epoch === 'string') query.epoch = start.epoch;
  void (async () => {
    try {
      const response = await fetchImpl(withQuery(url, query), {
        headers: { Accept: 'text/event-stream' },
        signal: controller.signal,
      });
      if (!response.ok || response.body === null) {
        // A refusal (401, 429, 503 …) is worth another try later: the backoff spaces them.
        events.frame(await refusalFrame(response));
        return drop();
      }
      streaming = true;
      clearTimeout(timer);
      await readEvents(response.body, (data) => {
        if (!ended) events.frame(parseFrame(data));
      });
      drop();
    } catch (error) {
      // Aborted by close(), or the network failed (fetch and reads reject with TypeError): either way the stream is
      // gone, and the client's reconnect is the answer. Anything else is a bug, and is thrown.
      if (ended || controller.signal.aborted) return;
      if (!(error instanceof TypeError) && (error as { name?: unknown } | null)?.name !== 'AbortError') throw error;
      drop();
    }
  })();
  return {
    get ready() {
      return !ended && streaming;
    },
    send(frame) {
      if (ended) return;
      void (async () => {
        try {
          const response = await fetchImpl(url, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({ ...frame, clientId: start.clientId }),
            signal: controller.signal,
          });
          const answer = parseFrame(await response.text());
          if (!ended && answer !== null && answer.type !== 'ok') events.frame(answer);
        } catch (error) {
          // A call that did not reach the server: the link is dropped, and the reconnect resends unanswered sends.
          if (ended || controller.signal.aborted) return;
          if (!(error instanceof TypeError) && (error as { name?: unknown } | null)?.name !== 'AbortError') throw error;
          drop();
        }
      })();
    },
    close: end,
  };
}

/** The `error` frame of a refused stream request, from its JSON body when it has one. */
async function refusalFrame(response: Response): Promise<Record<string, unknown>> {
  const body = parseFrame(await response.text());
  return {
    type: 'error',
    op: 'connect',
    code: typeof body?.code === 'string' ? body.code : `http_${response.status}`,
    message: typeof body?.message === 'string' ? body.message : `the stream was refused with ${response.status}`,
  };
}

/** Calls `onData` with the data of every event of an SSE stream until it ends. */
async function readEvents(body: ReadableStream<Uint8Array>, onData: (data: string) => void): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    // Lines end with CRLF, LF or CR; a blank line dispatches the event (the event stream format). A CR that ends the
    // chunk waits for the next one, which may start with its LF.
    const held = buffer.endsWith('\r') ? '\r' : '';
    const lines = buffer.slice(0, buffer.length - held.length).split(/\r\n|\r|\n/);
    buffer = (lines.pop() ?? '') + held;
    for (const line of lines) {
      if (line === '') {
        if (data.length > 0) onData(data.join('\n'));
        data = [];
      } else if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
    }
  }
}

function withQuery(url: string, query: Record<string, string>): string {
  const separator = url.includes('?') ? '&' : '?';
  return `${url}${separator}${new URLSearchParams(query).toString()}`;
}

/** A frame's JSON, or null for text that is not a JSON object (a server the client does not speak to). */
export function parseFrame(data: unknown): Record<string, unknown> | null {
  if (typeof data !== 'string') return null;
  try {
    const value: unknown = JSON.parse(data);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch (error) {
    if (error instanceof SyntaxError) return null;
    throw error;
  }
}
