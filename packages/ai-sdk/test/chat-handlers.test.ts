// The handlers' answers to bad requests, and the ends of a run other than `finish`.
import { createChatHandlers } from '@turnjournal/ai-sdk';
import { openConversationHub } from '@turnjournal/live';
import type { UIMessage, UIMessageChunk } from 'ai';
import { convertArrayToReadableStream } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { readAll, tempStore, transportTo, userMessage } from './support.js';

function post(body: unknown): Request {
  return new Request('http://chat.test/api/chat', { method: 'POST', body: JSON.stringify(body) });
}

async function answerTo(respond: () => ReadableStream<UIMessageChunk>) {
  const root = tempStore();
  const hub = openConversationHub({ root, retention: false });
  const errors: unknown[] = [];
  const handlers = createChatHandlers({ hub, respond, onError: (error) => errors.push(error) });
  const chunks = await readAll(
    await transportTo(handlers).sendMessages({
      chatId: 'c',
      messages: [userMessage('u1', 'hi')],
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: undefined,
    }),
  );
  await handlers.settled();
  const session = await hub.session('c');
  return { hub, handlers, chunks, status: session.runInfo('u1')?.status, errors };
}

describe('chat handlers', () => {
  it('answer a request at fault with 400 or 409 and write nothing for it', async () => {
    const root = tempStore();
    const hub = openConversationHub({ root, retention: false });
    let called = 0;
    let release = (): void => undefined;
    const handlers = createChatHandlers({
      hub,
      respond: () => {
        called += 1;
        return new ReadableStream<UIMessageChunk>({
          start: (controller) => {
            release = () => controller.close();
          },
        });
      },
    });
    const user = userMessage('u1', 'hi');
    const assistant: UIMessage = { id: 'a1', role: 'assistant', parts: [] };
    const statuses = [
      (await handlers.post(new Request('http://x/api/chat', { method: 'POST', body: '{not json' }))).status,
      (await handlers.post(post({ messages: [user] }))).status,
      (await handlers.post(post({ id: 'c', messages: [user, assistant] }))).status,
      (await handlers.post(post({ id: 'c', messages: [{ ...user, id: 'a/b' }] }))).status,
      (await handlers.post(post({ id: '../c', messages: [user] }))).status,
      (await handlers.resume('../c')).status,
    ];
    expect(statuses).toEqual([400, 400, 400, 400, 400, 400]);
    expect((await hub.session('c')).snapshot().lastSeq).toBeNull();
    const running = await handlers.post(post({ id: 'c', messages: [user] }));
    expect(running.status).toBe(200);
    const busy = await handlers.post(post({ id: 'c', messages: [userMessage('u2', 'more')] }));
    expect(busy.status).toBe(409);
    expect(await busy.text()).toMatch(/^run_active: /);
    release();
    await running.body?.cancel();
    await handlers.settled();
    expect(called).toBe(1);
    await hub.close();
  });

  it('end the run with an error when the stream says error or throws, and cancel it on abort', async () => {
    const said = await answerTo(() =>
      convertArrayToReadableStream<UIMessageChunk>([{ type: 'start' }, { type: 'error', errorText: 'rate limit' }]),
    );
    expect(said.chunks.at(-1)).toEqual({ type: 'error', errorText: 'rate limit' });
    expect(said.status).toBe('error');
    await said.hub.close();

    const thrown = await answerTo(
      () =>
        new ReadableStream<UIMessageChunk>({
          pull(controller) {
            controller.error(new Error('model unreachable'));
          },
        }),
    );
    expect(thrown.chunks).toEqual([
      { type: 'start', messageId: 'u1.assistant' },
      { type: 'error', errorText: 'model unreachable' },
    ]);
    expect(thrown.status).toBe('error');
    // The reloaded chat keeps the (empty) answer with its id, as the client has it.
    expect((await thrown.handlers.loadChat('c')).map((m) => m.id)).toEqual(['u1', 'u1.assistant']);
    await thrown.hub.close();

    const aborted = await answerTo(() =>
      convertArrayToReadableStream<UIMessageChunk>([
        { type: 'start', messageId: 'm' },
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'half' },
        { type: 'abort', reason: 'user stop' },
      ]),
    );
    expect(aborted.chunks.at(-1)).toEqual({ type: 'abort', reason: 'user stop' });
    expect(aborted.status).toBe('cancelled');
    const chat = await aborted.handlers.loadChat('c');
    expect(chat[1]?.parts).toEqual([{ type: 'text', text: 'half', state: 'streaming' }]);
    expect(aborted.errors).toEqual([]);
    await aborted.hub.close();
  });

  it('fail the run of a stream the SDK cannot read, keeping its chunks and the message as far as it was read', async () => {
    const invalid = await answerTo(() =>
      convertArrayToReadableStream<UIMessageChunk>([
        { type: 'start', messageId: 'm', messageMetadata: { n: 1 } },
        { type: 'text-delta', id: 'never-started', delta: 'x' },
        { type: 'finish' },
      ]),
    );
    expect(invalid.chunks.map((chunk) => chunk.type)).toEqual(['start', 'text-delta', 'finish']);
    expect(invalid.status).toBe('error');
    const chat = await invalid.handlers.loadChat('c');
    expect(chat.map((m) => m.id)).toEqual(['u1', 'm']);
    expect(chat[1]).toMatchObject({ metadata: { n: 1 }, parts: [] });
    await invalid.hub.close();
  });
});
