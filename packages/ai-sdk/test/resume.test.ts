// A client that goes away mid-answer, comes back, opens a second tab, or sends the same message again.
import { createChatHandlers } from '@turnjournal/ai-sdk';
import { openConversationHub } from '@turnjournal/live';
import { streamText, type UIMessage, type UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { answerParts, heldModel, readAll, tempStore, transportTo, userMessage } from './support.js';

const WORDS = Array.from({ length: 12 }, (_, i) => `w${i} `);

function textOf(chunks: readonly UIMessageChunk[]): string {
  return chunks.map((chunk) => (chunk.type === 'text-delta' ? chunk.delta : '')).join('');
}

/** A chat whose model holds its answer after the fifth word until `release()` (see `heldModel`). */
function setup() {
  const root = tempStore();
  const hub = openConversationHub({ root, retention: false });
  const { model, release } = heldModel(answerParts(WORDS), 7);
  const handlers = createChatHandlers({
    hub,
    respond: ({ messages }) =>
      streamText({ model, prompt: JSON.stringify(messages.at(-1)?.parts) }).toUIMessageStream(),
  });
  return { hub, model, release, handlers, transport: transportTo(handlers) };
}

function send(transport: ReturnType<typeof transportTo>, message: UIMessage, abortSignal?: AbortSignal) {
  return transport.sendMessages({
    chatId: 'chat',
    messages: [message],
    trigger: 'submit-message',
    messageId: undefined,
    abortSignal,
  });
}

describe('disconnect and resume', () => {
  it('a client that leaves mid-answer resumes it whole from the journal; the answer was finished meanwhile', async () => {
    const { hub, handlers, transport, release } = setup();
    const leaving = new AbortController();
    const reader = (await send(transport, userMessage('u1', 'hi'), leaving.signal)).getReader();
    const seen: UIMessageChunk[] = [];
    while (seen.filter((chunk) => chunk.type === 'text-delta').length < 3) {
      const next = await reader.read();
      if (next.done) throw new Error('the answer ended before the client left');
      seen.push(next.value);
    }
    leaving.abort();
    await reader.cancel().catch((error: unknown) => {
      if (!(error instanceof Error && error.name === 'AbortError')) throw error;
    });
    // The generation goes on without a client; the resume GET (useChat({ resume: true })) replays the run.
    const resumed = await transport.reconnectToStream({ chatId: 'chat' });
    if (resumed === null) throw new Error('no active run to resume (the generation stopped with the client?)');
    release();
    const chunks = await readAll(resumed);
    expect(chunks.slice(0, seen.length)).toEqual(seen);
    expect(textOf(chunks)).toBe(WORDS.join(''));
    expect(chunks.at(-1)?.type).toBe('finish');
    await handlers.settled();
    // Finished: nothing to resume (204 → null), and the reloaded chat holds the whole answer.
    expect(await transport.reconnectToStream({ chatId: 'chat' })).toBeNull();
    const chat = await handlers.loadChat('chat');
    expect(chat.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(chat[1]?.parts.find((part) => part.type === 'text')).toMatchObject({ text: WORDS.join('') });
    await hub.close();
  });

  it('two tabs resuming the same run read the same chunks; the first render leaves the running answer out', async () => {
    const { hub, handlers, transport, release } = setup();
    const first = send(transport, userMessage('u1', 'hi'));
    const firstChunks = first.then(readAll);
    // The run has started once the first response exists (the user message is durable before the model call).
    await first;
    expect((await handlers.loadChat('chat')).map((m) => m.id)).toEqual(['u1']);
    const tabs = await Promise.all([
      transport.reconnectToStream({ chatId: 'chat' }),
      transport.reconnectToStream({ chatId: 'chat' }),
    ]);
    release();
    const [a, b] = await Promise.all(tabs.map((stream) => (stream === null ? [] : readAll(stream))));
    expect(a).toEqual(await firstChunks);
    expect(b).toEqual(a);
    expect(textOf(a ?? [])).toBe(WORDS.join(''));
    await handlers.settled();
    await hub.close();
  });

  it('a retried send (same message id) starts no second generation and answers with the first run', async () => {
    const { hub, model, handlers, transport, release } = setup();
    release();
    const message = userMessage('u1', 'hi');
    const [once, again] = await Promise.all([send(transport, message), send(transport, message)]);
    const [chunks, retried] = await Promise.all([readAll(once), readAll(again)]);
    await handlers.settled();
    const afterwards = await readAll(await send(transport, message));
    expect(model.doStreamCalls).toHaveLength(1);
    expect(retried).toEqual(chunks);
    expect(afterwards).toEqual(chunks);
    expect((await handlers.loadChat('chat')).map((m) => m.role)).toEqual(['user', 'assistant']);
    await hub.close();
  });
});
