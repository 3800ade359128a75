// Every kind of UI message chunk through the journal and back: the response a client reads, the chat it reloads.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createChatHandlers } from '@turnjournal/ai-sdk';
import { openConversationHub } from '@turnjournal/live';
import { readUIMessageStream, streamText, tool, type UIMessage, type UIMessageChunk } from 'ai';
import { convertArrayToReadableStream } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { answerParts, json, mockModel, readAll, tempStore, transportTo, usage, userMessage } from './support.js';

/** One of every chunk type of `ai` 6, with the optional members that the stream records have no place for. */
const EVERY_CHUNK: UIMessageChunk[] = [
  { type: 'start', messageId: 'answer-1', messageMetadata: { model: 'mock', n: 1 } },
  { type: 'start-step' },
  { type: 'reasoning-start', id: 'r1', providerMetadata: { mock: { signature: 'sig' } } },
  { type: 'reasoning-delta', id: 'r1', delta: 'thinking ' },
  { type: 'reasoning-delta', id: 'r1', delta: 'hard' },
  { type: 'reasoning-end', id: 'r1' },
  { type: 'text-start', id: 't1' },
  { type: 'text-delta', id: 't1', delta: 'Hello, ' },
  { type: 'text-start', id: 't2', providerMetadata: { mock: { lane: 2 } } },
  { type: 'text-delta', id: 't2', delta: 'second part' },
  { type: 'text-delta', id: 't1', delta: 'world', providerMetadata: { mock: { t: 1 } } },
  { type: 'text-delta', id: 't1', delta: '' },
  { type: 'text-end', id: 't2' },
  { type: 'text-end', id: 't1' },
  { type: 'tool-input-start', toolCallId: 'c1', toolName: 'search', title: 'Search' },
  { type: 'tool-input-delta', toolCallId: 'c1', inputTextDelta: '{"q":' },
  { type: 'tool-input-delta', toolCallId: 'c1', inputTextDelta: '"x"}' },
  { type: 'tool-input-available', toolCallId: 'c1', toolName: 'search', input: { q: 'x' }, title: 'Search' },
  { type: 'tool-output-available', toolCallId: 'c1', output: { hits: ['a', 'b'] }, preliminary: true },
  { type: 'tool-output-available', toolCallId: 'c1', output: { hits: ['a', 'b', 'c'], n: 3 } },
  { type: 'tool-input-available', toolCallId: 'c2', toolName: 'shell', input: { cmd: 'ls' }, dynamic: true },
  { type: 'tool-output-error', toolCallId: 'c2', errorText: 'permission denied', dynamic: true },
  { type: 'tool-input-error', toolCallId: 'c3', toolName: 'search', input: '{bad', errorText: 'not JSON' },
  { type: 'tool-input-available', toolCallId: 'c4', toolName: 'search', input: 'plain string input' },
  { type: 'tool-output-available', toolCallId: 'c4', output: 'plain string output' },
  { type: 'tool-input-available', toolCallId: 'c5', toolName: 'deploy', input: { env: 'prod' } },
  { type: 'tool-approval-request', approvalId: 'a5', toolCallId: 'c5' },
  { type: 'tool-output-denied', toolCallId: 'c5' },
  { type: 'source-url', sourceId: 's1', url: 'https://example.org/a', title: 'A' },
  { type: 'source-document', sourceId: 's2', mediaType: 'text/plain', title: 'Notes', filename: 'notes.txt' },
  { type: 'file', url: 'data:text/plain;base64,aGk=', mediaType: 'text/plain' },
  { type: 'data-weather', id: 'w1', data: { city: 'Oslo', temp: -3 } },
  { type: 'data-weather', id: 'w1', data: { city: 'Oslo', temp: -2 } },
  { type: 'data-notice', data: 'transient only', transient: true },
  { type: 'message-metadata', messageMetadata: { model: 'mock', n: 2 } },
  { type: 'finish-step' },
  { type: 'finish', finishReason: 'stop', messageMetadata: { model: 'mock', n: 3 } },
];

/** The UIMessage the SDK's own reader makes of `chunks` (what a client holds once the stream ended). */
async function folded(chunks: readonly UIMessageChunk[]): Promise<UIMessage> {
  let message: UIMessage | undefined;
  // A copy: the reader merges data and metadata into the chunk objects it is given.
  for await (const state of readUIMessageStream<UIMessage>({ stream: convertArrayToReadableStream(json([...chunks])) }))
    message = state;
  if (message === undefined) throw new Error('the stream gave no message');
  return message;
}

function recordTypes(root: string, chatId: string): string[] {
  return readFileSync(join(root, chatId, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => (JSON.parse(line) as { type: string }).type);
}

describe('a UI message stream through the journal', () => {
  it('gives the client every chunk type as written and reloads the same UIMessage[], also after a reopen', async () => {
    const root = tempStore();
    let hub = openConversationHub({ root, retention: false });
    let handlers = createChatHandlers({ hub, respond: () => convertArrayToReadableStream(json(EVERY_CHUNK)) });
    const user: UIMessage = { ...userMessage('u1', 'Hi'), metadata: { sentAt: 1 } };
    const chunks = await readAll(
      await transportTo(handlers).sendMessages({
        chatId: 'chat-1',
        messages: [user],
        trigger: 'submit-message',
        messageId: undefined,
        abortSignal: undefined,
      }),
    );
    expect(chunks).toEqual(json(EVERY_CHUNK));
    await handlers.settled();
    const expected = json([user, await folded(EVERY_CHUNK)]);
    expect(await handlers.loadChat('chat-1')).toEqual(expected);
    await hub.close();

    hub = openConversationHub({ root, retention: false });
    handlers = createChatHandlers({ hub, respond: () => convertArrayToReadableStream([]) });
    expect(JSON.stringify(await handlers.loadChat('chat-1'))).toBe(JSON.stringify(expected));
    // The stream records carry the text and the tool calls that readers without the AI SDK see.
    const types = recordTypes(root, 'chat-1');
    expect(types.filter((type) => type === 'chat.delta')).toHaveLength(4);
    expect(types.filter((type) => type === 'tool.start')).toHaveLength(4);
    expect(types.filter((type) => type === 'tool.result')).toHaveLength(3);
    const view = (await hub.session('chat-1')).snapshot();
    expect(view.messages.filter((m) => m.role === 'assistant').map((m) => m.content)).toEqual([
      'Hello, second partworld',
    ]);
    await hub.close();
  });

  it('persists streamText with the mock model: reasoning, a tool call it executes, the text of the second step', async () => {
    const root = tempStore();
    const hub = openConversationHub({ root, retention: false });
    const model = mockModel([
      [
        { type: 'stream-start', warnings: [] },
        { type: 'tool-call', toolCallId: 'call-1', toolName: 'weather', input: '{"city":"Oslo"}' },
        { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage },
      ],
      answerParts(['It is ', 'cold.'], 'check the tool'),
    ]);
    const produced: UIMessageChunk[] = [];
    const handlers = createChatHandlers({
      hub,
      respond: ({ messages }) => {
        const result = streamText({
          model,
          prompt: messages.map((m) => m.parts.map((p) => (p.type === 'text' ? p.text : '')).join('')).join('\n'),
          tools: {
            weather: tool({
              inputSchema: z.object({ city: z.string() }),
              execute: async ({ city }) => ({ city, temp: -3 }),
            }),
          },
          stopWhen: ({ steps }) => steps.length >= 2,
        });
        // What the SDK produced, copied as it passes (the integration's reader may change the objects later).
        return result.toUIMessageStream({ sendReasoning: true }).pipeThrough(
          new TransformStream<UIMessageChunk, UIMessageChunk>({
            transform(chunk, controller) {
              produced.push(json(chunk));
              controller.enqueue(chunk);
            },
          }),
        );
      },
    });
    const user = userMessage('u1', 'Weather in Oslo?');
    const chunks = await readAll(
      await transportTo(handlers).sendMessages({
        chatId: 'c',
        messages: [user],
        trigger: 'submit-message',
        messageId: undefined,
        abortSignal: undefined,
      }),
    );
    await handlers.settled();
    // The model's stream had no message id: the integration named the answer so that client and journal agree.
    expect(chunks[0]).toEqual({ type: 'start', messageId: 'u1.assistant' });
    expect(chunks.slice(1)).toEqual(json(produced.slice(1)));
    expect(chunks.map((c) => c.type)).toContain('tool-output-available');
    expect(chunks.map((c) => c.type)).toContain('reasoning-delta');
    expect(await handlers.loadChat('c')).toEqual(json([user, await folded(chunks)]));
    await hub.close();
  });
});
