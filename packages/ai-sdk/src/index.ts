// @turnjournal/ai-sdk: durable, resumable AI SDK chats on turnjournal live sessions (the `ai` package, major 6).
export { type ChatHandlers, type ChatHandlersOptions, createChatHandlers, type RespondInput } from './chat-handlers.js';
export { ChunkReplay, INTERRUPTED_BY_RESTART } from './chunk-replay.js';
export { ChunkWriter, type StreamEnd } from './chunk-writer.js';
export { type FollowRunOptions, followRun, RUN_COMPACTED } from './follow-run.js';
export { type LoadChatOptions, loadChat, type ResumableRun, resumableRun } from './load-chat.js';
export { type PersistOptions, persistUIMessageStream } from './persist-stream.js';
export { CHUNK_RECORD, type ChunkRecord, type JoinedRecord, UI_MEMBER, UI_MESSAGE_ROLE } from './records.js';
