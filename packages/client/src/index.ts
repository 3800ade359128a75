// @turnjournal/client: the browser and Node client of turnjournal live sessions (packages/client/README.md). No
// dependencies and no Node-only imports: it runs on the platform's WebSocket, or on one the app passes.
export { ClientError, type ClientErrorCode } from './errors.js';
export type { ClientEvent, ConnectionState, RecordFrame, SnapshotMode, ViewFrame } from './frames.js';
export type { FetchFunction, WebSocketConstructor, WebSocketLike } from './links.js';
export { type ClientCursor, LiveClient, type LiveClientOptions, type SendAnswer } from './live-client.js';
export type { RunStatus, TokenEvent, ToolCall, UndeliveredRun } from './wire.js';
