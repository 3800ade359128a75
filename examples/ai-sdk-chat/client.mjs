#!/usr/bin/env node
// Talks to server.mjs the way `useChat({ resume: true })` does: first render from the journal, resume the running
// answer if there is one, then send a message and print the answer as it streams.
// Usage: node client.mjs [--url http://127.0.0.1:8788] [--chat ID] [message]
import { parseArgs } from 'node:util';
import { loadMessages, PlainChat } from './chat-client.mjs';

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: { url: { type: 'string', default: 'http://127.0.0.1:8788' }, chat: { type: 'string', default: 'demo' } },
});

const print = (message) => {
  const text = message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
  console.log(`${message.role}: ${text}`);
};

const messages = await loadMessages(flags.url, flags.chat);
messages.forEach(print);
const textOf = (message) => (message?.parts ?? []).map((part) => (part.type === 'text' ? part.text : '')).join('');
// What is printed of the last assistant message: all of it when it came from the first render.
let shown = messages.at(-1)?.role === 'assistant' ? textOf(messages.at(-1)).length : 0;
const chat = new PlainChat({
  baseUrl: flags.url,
  id: flags.chat,
  messages,
  onError: (error) => console.error(`\n[${error.message}]`),
});
const stream = () => {
  const text = textOf(chat.lastMessage);
  if (chat.lastMessage?.role === 'assistant' && text.length > shown) process.stdout.write(text.slice(shown));
  shown = text.length;
};
const timer = setInterval(stream, 50);
await chat.resumeStream(); // the answer a reload interrupted, or nothing (204)
if (positionals.length > 0) {
  stream();
  shown = 0;
  console.log(`\nuser: ${positionals.join(' ')}`);
  process.stdout.write('assistant: ');
  await chat.sendMessage({ text: positionals.join(' ') });
}
stream();
clearInterval(timer);
console.log(`\n[${chat.status}]`);
