// The chat page: the AI SDK's own chat engine (chat-client.mjs: `AbstractChat` with a plain state, the SDK's
// `DefaultChatTransport`), as `useChat({ id, messages, resume: true })` runs it. The first render is the chat from
// the journal; then a resume request gets the answer that is still running (or that a server restart interrupted), so
// a reload mid-answer continues it in the same bubble. ?chat=ID picks the chat (default "demo").
import { loadMessages, PlainChat } from '/chat-client.mjs';

const chatId = new URLSearchParams(location.search).get('chat') ?? 'demo';
const transcript = document.getElementById('transcript');
const status = document.getElementById('status');
const errorLine = document.getElementById('error');
const input = document.getElementById('input');

/** What the page did, for the browser test: every status it showed, in order, and whether its resume request is over. */
window.chatPage = { statuses: [], resumed: false };

const textOf = (message) => message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');

/**
 * An answer that stopped before its end: a text part still open (the SDK closes it at `text-end`) while nothing is
 * streaming into it. That is an answer a server restart interrupted (the journal kept its text), or one whose
 * connection broke.
 */
const interrupted = (message, streamingInto) =>
  message.role === 'assistant' &&
  !streamingInto &&
  message.parts.some((part) => part.type === 'text' && part.state === 'streaming');

let chat;

function render() {
  const busy = chat.status === 'submitted' || chat.status === 'streaming';
  status.dataset.state = chat.status;
  status.textContent = chat.status;
  if (window.chatPage.statuses.at(-1) !== chat.status) window.chatPage.statuses.push(chat.status);
  errorLine.hidden = chat.error === undefined;
  errorLine.textContent = chat.error?.message ?? '';
  const nodes = chat.messages.map((message, index) => {
    const streaming = busy && index === chat.messages.length - 1 && message.role === 'assistant';
    const node = document.createElement('div');
    node.className = `msg ${message.role}`;
    node.dataset.id = message.id;
    node.dataset.role = message.role;
    node.classList.toggle('streaming', streaming);
    const text = document.createElement('span');
    text.className = 'text';
    text.textContent = textOf(message);
    node.append(text);
    if (interrupted(message, streaming)) {
      node.classList.add('interrupted');
      const label = document.createElement('span');
      label.className = 'label';
      label.textContent = 'interrupted';
      node.append(label);
    }
    return node;
  });
  transcript.replaceChildren(...nodes);
}

let scheduled = false;
/** Renders once for the changes of one turn of the event loop (a chunk changes the state several times). */
function renderSoon() {
  if (scheduled) return;
  scheduled = true;
  queueMicrotask(() => {
    scheduled = false;
    render();
  });
}

chat = new PlainChat({
  id: chatId,
  messages: await loadMessages('', chatId),
  onChange: () => {
    if (chat !== undefined) renderSoon();
  },
});
render();

document.getElementById('composer').addEventListener('submit', (event) => {
  event.preventDefault();
  const text = input.value.trim();
  if (text === '' || chat.status === 'submitted' || chat.status === 'streaming') return;
  input.value = '';
  chat.sendMessage({ text });
});

// useChat({ resume: true }) on mount: the running or interrupted answer, or nothing (204).
await chat.resumeStream();
window.chatPage.resumed = true;
