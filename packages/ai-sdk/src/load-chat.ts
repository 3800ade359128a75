import type { ConversationView, HubSession } from '@turnjournal/live';
import { readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import { followRun, RUN_COMPACTED } from './follow-run.js';
import { UI_MEMBER, UI_MESSAGE_ROLE } from './records.js';

type ViewMessage = ConversationView['messages'][number] & Record<string, unknown>;

/** The run a resume request replays: its id and the seq of its `chat.started`. */
export interface ResumableRun {
  readonly requestId: string;
  readonly startedSeq: number;
}

/**
 * The run that `useChat({ resume: true })` gets back from the resume handler, if any: the active run; else the last
 * run when restart recovery ended it (it has no `UIMessage` of its own, TJ-LIVE-016) and no client has received its
 * end yet (no `delivery.ack`), so that the client that was reading it sees it end with the SDK's error chunk.
 */
export function resumableRun(session: HubSession, view = session.snapshot()): ResumableRun | undefined {
  const active = view.activeRun;
  if (active !== null) return { requestId: active.requestId, startedSeq: active.startedSeq };
  const messages = view.messages as readonly ViewMessage[];
  const last = messages.findLast((message) => message.role === 'user' && typeof message.request_id === 'string');
  if (last === undefined) return undefined;
  const requestId = last.request_id as string;
  const run = session.runInfo(requestId);
  if (run === undefined || run.acked || run.status === 'done' || run.status === 'running') return undefined;
  if (messages.some((message) => message.role === UI_MESSAGE_ROLE && message.request_id === requestId))
    return undefined;
  return { requestId, startedSeq: run.startedSeq };
}

/** Options of {@link loadChat}. */
export interface LoadChatOptions {
  /**
   * Leave out the assistant message of the run the resume handler replays ({@link resumableRun}), which the client
   * gets from it (default true: what `useChat({ resume: true })` needs, or it would show that answer twice).
   */
  readonly forResume?: boolean;
}

/**
 * The chat of a live session as the AI SDK's `UIMessage[]`, for the first render: each user message and each answer
 * as the client built it (the `UIMessage` kept with the turn and with the run's end, parts, ids and metadata
 * included). An answer that restart recovery ended has none: it is rebuilt from the run's records with the SDK's own
 * reader, partial text included, while they last (compaction keeps the message list, not a finished run's stream
 * records: then its committed text stands for it). Messages of other writers read as text messages.
 */
export async function loadChat(session: HubSession, options: LoadChatOptions = {}): Promise<UIMessage[]> {
  const view = session.snapshot();
  const skip = options.forResume === false ? undefined : resumableRun(session, view)?.requestId;
  const messages = view.messages as readonly ViewMessage[];
  const answered = new Set<string>();
  for (const message of messages)
    if (
      message.role === UI_MESSAGE_ROLE &&
      typeof message.request_id === 'string' &&
      typeof message[UI_MEMBER] === 'object'
    )
      answered.add(message.request_id);
  const chat: UIMessage[] = [];
  for (const [index, message] of messages.entries()) {
    const requestId = typeof message.request_id === 'string' ? message.request_id : undefined;
    if (message.role === UI_MESSAGE_ROLE) {
      const kept = message[UI_MEMBER];
      if (requestId !== skip && typeof kept === 'object' && kept !== null) chat.push(kept as UIMessage);
      continue;
    }
    if (message.role === 'user') {
      chat.push(userMessage(message, requestId, index));
      if (requestId !== undefined && requestId !== skip && !answered.has(requestId)) {
        const answer = await rebuiltAnswer(session, requestId, messages);
        if (answer !== undefined) chat.push(answer);
      }
      continue;
    }
    // Assistant segments and tool messages of a run are in its UIMessage; others' messages read as text.
    if (requestId === undefined && (message.role === 'system' || message.role === 'assistant'))
      chat.push({
        id: typeof message.id === 'string' ? message.id : `message-${index}`,
        role: message.role,
        parts: [{ type: 'text', text: textContent(message.content) }],
      });
  }
  return chat;
}

function userMessage(message: ViewMessage, requestId: string | undefined, index: number): UIMessage {
  const kept = message[UI_MEMBER];
  if (typeof kept === 'object' && kept !== null) return kept as UIMessage;
  // A user message restored from the turn journal after a crash (TJ-LIVE-019), or another writer's.
  return {
    id: requestId ?? (typeof message.id === 'string' ? message.id : `message-${index}`),
    role: 'user',
    parts: [{ type: 'text', text: textContent(message.content) }],
  };
}

function textContent(content: unknown): string {
  return typeof content === 'string' ? content : JSON.stringify(content ?? '');
}

/**
 * The answer of a finished run that has no `UIMessage` (restart recovery ended it): its records replayed through the
 * SDK's reader; when compaction removed them, its committed text. Undefined for a run with neither.
 */
async function rebuiltAnswer(
  session: HubSession,
  requestId: string,
  messages: readonly ViewMessage[],
): Promise<UIMessage | undefined> {
  const run = session.runInfo(requestId);
  if (run === undefined || run.status === 'running') return undefined;
  let compacted = false;
  const chunks = followRun(session, requestId, run.startedSeq).pipeThrough(
    new TransformStream<UIMessageChunk, UIMessageChunk>({
      transform(chunk, controller) {
        // followRun's answer to records compaction removed: this reader has the committed text instead.
        if (chunk.type === 'error' && chunk.errorText === RUN_COMPACTED) compacted = true;
        else controller.enqueue(chunk);
      },
    }),
  );
  let answer: UIMessage | undefined;
  // The reader reports the run's error chunk (its interruption) here: a UIMessage has no part for it, and the client
  // that reloads gets the same message. A chunk the reader cannot apply stops it where it would stop the client.
  for await (const state of readUIMessageStream<UIMessage>({ stream: chunks, onError: () => undefined }))
    answer = state;
  if (!compacted) return answer;
  const text = messages
    .filter((message) => message.request_id === requestId && message.role === 'assistant')
    .map((message) => textContent(message.content))
    .join('');
  return text === '' ? undefined : { id: `${requestId}.assistant`, role: 'assistant', parts: [{ type: 'text', text }] };
}
