// A server killed mid-answer (SIGKILL: no close, no flush), restarted on the same store, and the client that comes
// back: the partial answer ends with the SDK's error chunk, the chat reloads with it, and a new message works.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { INTERRUPTED_BY_RESTART } from '@turnjournal/ai-sdk';
import { DefaultChatTransport, type UIMessage, type UIMessageChunk } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { readAll, tempStore, userMessage } from './support.js';

const SERVER = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'chat-server.mjs');
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/** Starts the fixture server on `root` (on `port`, or any) and resolves with its port once it listens. */
async function startServer(root: string, port = 0): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [SERVER, root, String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  child.stderr?.on('data', (data) => {
    output += String(data);
  });
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (data) => {
      output += String(data);
      const listening = /listening (\d+)/.exec(output);
      if (listening !== null) resolve({ child, port: Number(listening[1]) });
    });
    child.on('exit', (code, signal) => reject(new Error(`the chat server exited (${code ?? signal}):\n${output}`)));
  });
}

function textOf(chunks: readonly UIMessageChunk[]): string {
  return chunks.map((chunk) => (chunk.type === 'text-delta' ? chunk.delta : '')).join('');
}

describe('a server killed mid-answer', () => {
  it('resumes the partial answer ending with an error chunk, reloads it, and answers a new message', async () => {
    const root = tempStore();
    const first = await startServer(root);
    const transport = (port: number) =>
      new DefaultChatTransport<UIMessage>({ api: `http://127.0.0.1:${port}/api/chat` });
    const question = userMessage('u1', 'tell me a long story');
    const reader = (
      await transport(first.port).sendMessages({
        chatId: 'story',
        messages: [question],
        trigger: 'submit-message',
        messageId: undefined,
        abortSignal: undefined,
      })
    ).getReader();
    const seen: UIMessageChunk[] = [];
    while (seen.filter((chunk) => chunk.type === 'text-delta').length < 5) {
      const next = await reader.read();
      if (next.done) throw new Error('the answer ended before the server was killed');
      seen.push(next.value);
    }
    first.child.kill('SIGKILL');
    await once(first.child, 'exit');
    await reader.read().then(
      (next) => expect(next.done).toBe(true),
      (error: unknown) => expect(error).toBeInstanceOf(Error),
    );

    const second = await startServer(root, first.port);
    // The client that comes back (useChat({ resume: true }) after a reload): the run as the journal kept it.
    const resumed = await transport(second.port).reconnectToStream({ chatId: 'story' });
    if (resumed === null) throw new Error('the interrupted run was not offered to the client that came back');
    const replay = await readAll(resumed);
    // Every chunk the client had was durable before it got it: the replay starts with them, and holds no answer
    // that was never streamed (the model's later words are not made up).
    expect(replay.slice(0, seen.length)).toEqual(seen);
    expect(textOf(replay).startsWith(textOf(seen))).toBe(true);
    expect(textOf(replay).length).toBeLessThan('word0 '.length * 40);
    expect(replay.at(-1)).toEqual({ type: 'error', errorText: INTERRUPTED_BY_RESTART });
    // Received once: the next reload renders it from loadChat and has nothing to resume.
    expect(await transport(second.port).reconnectToStream({ chatId: 'story' })).toBeNull();
    const chat = (await (await fetch(`http://127.0.0.1:${second.port}/api/chat/story/messages`)).json()) as UIMessage[];
    expect(chat.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(chat[1]?.parts.find((part) => part.type === 'text')).toMatchObject({ text: textOf(replay) });

    const next = await readAll(
      await transport(second.port).sendMessages({
        chatId: 'story',
        messages: [...chat, userMessage('u2', 'again, please')],
        trigger: 'submit-message',
        messageId: undefined,
        abortSignal: undefined,
      }),
    );
    expect(next.at(-1)?.type).toBe('finish');
    expect(textOf(next)).toBe(Array.from({ length: 40 }, (_, i) => `word${i} `).join(''));
    second.child.kill('SIGTERM');
  });
});
