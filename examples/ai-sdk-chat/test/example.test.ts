// The example end to end: server.mjs in a child process, clients on the AI SDK's own chat engine (AbstractChat, as
// useChat) over HTTP. A tab that leaves mid-answer and a new one that resumes it; a server SIGKILLed mid-answer.
import { once } from 'node:events';
import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { loadMessages, PlainChat } from '../chat-client.mjs';
import { mockAnswer } from '../model.mjs';
import { startServer, store } from './harness.js';

const textOf = (message: UIMessage | undefined) =>
  (message?.parts ?? []).map((part) => (part.type === 'text' ? part.text : '')).join('');

/** Waits until `chat`'s answer has at least `words` words (a guard of 20 s, far above the answer's 2 s). */
async function whenWords(chat: PlainChat, words: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (textOf(chat.lastMessage).split(' ').length <= words) {
    if (Date.now() > deadline) throw new Error(`no ${words} words after 20 s: "${textOf(chat.lastMessage)}"`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('the AI SDK chat example', () => {
  it('a tab closed mid-answer: a new tab renders the chat and resumes the answer in the same message', async () => {
    const { url } = await startServer(store());
    const first = new PlainChat({ baseUrl: url, id: 'demo' });
    const sending = first.sendMessage({ text: 'hello' });
    await whenWords(first, 5);
    await first.stop(); // the tab goes away: its request is aborted
    await sending;

    const second = new PlainChat({ baseUrl: url, id: 'demo', messages: await loadMessages(url, 'demo') });
    expect(second.messages.map((m) => m.role)).toEqual(['user']); // the running answer comes from the resume
    await second.resumeStream();
    expect(second.status).toBe('ready');
    expect(second.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(textOf(second.lastMessage)).toBe(mockAnswer('hello').join(''));
    // A reload after the end renders the same chat from the journal, with nothing to resume.
    const third = await loadMessages(url, 'demo');
    expect(third).toEqual(JSON.parse(JSON.stringify(second.messages)));
  });

  it('a server killed mid-answer: the partial answer comes back as interrupted, then a new message works', async () => {
    const root = store();
    const first = await startServer(root);
    const tab = new PlainChat({ baseUrl: first.url, id: 'demo' });
    const sending = tab.sendMessage({ text: 'hello' });
    await whenWords(tab, 5);
    const before = textOf(tab.lastMessage);
    first.child.kill('SIGKILL');
    await once(first.child, 'exit');
    await sending;
    expect(tab.status).toBe('error');

    const port = Number(new URL(first.url).port);
    const second = await startServer(root, { port });
    const reloaded = new PlainChat({
      baseUrl: second.url,
      id: 'demo',
      messages: await loadMessages(second.url, 'demo'),
    });
    await reloaded.resumeStream();
    expect(reloaded.status).toBe('error');
    expect(reloaded.error?.message).toMatch(/interrupted by a server restart/);
    const partial = textOf(reloaded.lastMessage);
    expect(partial.startsWith(before)).toBe(true);
    expect(mockAnswer('hello').join('').startsWith(partial)).toBe(true);
    expect(partial.length).toBeLessThan(mockAnswer('hello').join('').length);

    await reloaded.sendMessage({ text: 'again' });
    expect(reloaded.status).toBe('ready');
    expect(textOf(reloaded.lastMessage)).toBe(mockAnswer('again').join(''));
    expect((await loadMessages(second.url, 'demo')).map((m) => textOf(m))).toEqual([
      'hello',
      partial,
      'again',
      mockAnswer('again').join(''),
    ]);
  });
});
