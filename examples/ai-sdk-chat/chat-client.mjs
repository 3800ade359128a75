// A chat client on the AI SDK's own engine: `AbstractChat` (what `useChat` and the Vue/Svelte `Chat` classes extend)
// with a plain state object, and the SDK's `DefaultChatTransport`. No framework: the command-line client runs it in
// Node, and the browser page (public/app.mjs) runs this same file with the SDK's modules served through an import map.
import { AbstractChat, DefaultChatTransport } from 'ai';

/** The chat state `AbstractChat` writes to, telling `onChange` after every change (a page re-renders there). */
class PlainState {
  #status = 'ready';
  #error = undefined;
  #messages;
  #onChange;
  constructor(messages, onChange) {
    this.#messages = messages;
    this.#onChange = onChange;
  }
  get status() {
    return this.#status;
  }
  set status(status) {
    this.#status = status;
    this.#onChange();
  }
  get error() {
    return this.#error;
  }
  set error(error) {
    this.#error = error;
    this.#onChange();
  }
  get messages() {
    return this.#messages;
  }
  set messages(messages) {
    this.#messages = messages;
    this.#onChange();
  }
  pushMessage = (message) => {
    this.messages = [...this.#messages, message];
  };
  popMessage = () => {
    this.messages = this.#messages.slice(0, -1);
  };
  replaceMessage = (index, message) => {
    this.messages = this.#messages.map((existing, i) => (i === index ? message : existing));
  };
  snapshot = (value) => structuredClone(value);
}

/**
 * A chat `id` on the server at `baseUrl` (the page's own origin when empty), starting from `messages` (loadChat's), as
 * `useChat` would hold it; `onChange` is called after every change of its status, error or messages.
 */
export class PlainChat extends AbstractChat {
  constructor({ baseUrl = '', id, messages = [], onChange = () => {}, ...init }) {
    super({
      id,
      transport: new DefaultChatTransport({ api: `${baseUrl}/api/chat` }),
      state: new PlainState(messages, onChange),
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
