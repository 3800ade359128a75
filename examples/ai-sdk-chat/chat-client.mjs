// A chat client on the AI SDK's own engine: `AbstractChat` (what `useChat` and the Vue/Svelte `Chat` classes extend)
// with a plain state object, and the SDK's `DefaultChatTransport`. No framework, so it runs in Node (the SDK's client
// modules import other npm packages by name, so a browser needs a bundler for them).
import { AbstractChat, DefaultChatTransport } from 'ai';

class PlainState {
  status = 'ready';
  error = undefined;
  messages;
  constructor(messages) {
    this.messages = messages;
  }
  pushMessage = (message) => {
    this.messages = [...this.messages, message];
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index, message) => {
    this.messages = this.messages.map((existing, i) => (i === index ? message : existing));
  };
  snapshot = (value) => structuredClone(value);
}

/** A chat `id` on the server at `baseUrl`, starting from `messages` (loadChat's), as `useChat` would hold it. */
export class PlainChat extends AbstractChat {
  constructor({ baseUrl, id, messages = [], ...init }) {
    super({
      id,
      transport: new DefaultChatTransport({ api: `${baseUrl}/api/chat` }),
      state: new PlainState(messages),
      ...init,
    });
  }
}

/** The chat's messages from the server (`loadChat`), for a first render. */
export async function loadMessages(baseUrl, id) {
  const response = await fetch(`${baseUrl}/api/chat/${encodeURIComponent(id)}/messages`);
  if (!response.ok) throw new Error(`GET messages: ${response.status} ${await response.text()}`);
  return response.json();
}
