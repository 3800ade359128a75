import { AbstractChat, type ChatInit, type UIMessage } from 'ai';

/** A chat `id` on the server at `baseUrl`, on the AI SDK's own engine with a plain state. */
export declare class PlainChat extends AbstractChat<UIMessage> {
  constructor(
    options: { baseUrl?: string; id: string; messages?: UIMessage[]; onChange?: () => void } & Omit<
      ChatInit<UIMessage>,
      'id' | 'messages'
    >,
  );
}

/** The chat's messages from the server (`loadChat`). */
export declare function loadMessages(baseUrl: string, id: string): Promise<UIMessage[]>;
