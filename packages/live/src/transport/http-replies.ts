// How a transport answers an HTTP request it refuses or serves: a JSON body with the same `{ type, code, message }`
// as a WebSocket error frame, under the HTTP status that says the same thing.
import type { ServerResponse } from 'node:http';

/** The HTTP status of a refusal with `code` (a `LiveErrorCode` or a transport's own). */
export function httpStatusOf(code: string): number {
  switch (code) {
    case 'invalid_frame':
    case 'invalid_request':
    case 'ack_before_finish':
    case 'ack_beyond_log':
    case 'reserved_session_id':
      return 400;
    case 'forbidden_session':
      return 403;
    case 'unknown_run':
      return 404;
    case 'run_active':
    case 'run_not_active':
    case 'run_not_finished':
    case 'request_id_conflict':
      return 409;
    case 'payload_too_large':
      return 413;
    case 'too_many_requests':
    case 'too_many_subscribers':
      return 429;
    case 'session_closed':
    case 'session_failed':
    case 'too_many_sessions':
      return 503;
    default:
      return 500;
  }
}

/** Answers `response` with `status` and `body` as JSON, closing the connection when `close` (an unread body). */
export function sendJson(response: ServerResponse, status: number, body: Record<string, unknown>, close = false): void {
  if (response.headersSent || response.destroyed) return;
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
    ...(close ? { Connection: 'close' } : {}),
  });
  response.end(text);
}
