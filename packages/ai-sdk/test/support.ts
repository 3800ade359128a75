import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChatHandlers } from '@turnjournal/ai-sdk';
import { DefaultChatTransport, type UIMessage, type UIMessageChunk } from 'ai';
import { MockLanguageModelV3, simulateReadableStream } from 'ai/test';
import { afterEach } from 'vitest';

const stores: string[] = [];
afterEach(() => {
  for (const dir of stores.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A new empty store directory, removed after the test that made it. */
export function tempStore(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tj-ai-sdk-'));
  stores.push(dir);
  return dir;
}

/** A language-model stream part (the provider's `LanguageModelV3StreamPart`). */
type StreamPart =
  Awaited<ReturnType<MockLanguageModelV3['doStream']>>['stream'] extends ReadableStream<infer Part> ? Part : never;

/** Token usage of a mock answer. */
export const usage = {
  inputTokens: { total: 3, noCache: 3, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/** The language-model stream parts of an answer of `words` (one text delta each), reasoning first when given. */
export function answerParts(words: readonly string[], reasoning?: string): StreamPart[] {
  return [
    { type: 'stream-start', warnings: [] },
    ...(reasoning === undefined
      ? []
      : [
          { type: 'reasoning-start', id: 'r0' },
          { type: 'reasoning-delta', id: 'r0', delta: reasoning },
          { type: 'reasoning-end', id: 'r0' },
        ]),
    { type: 'text-start', id: 't0' },
    ...words.map((delta) => ({ type: 'text-delta', id: 't0', delta })),
    { type: 'text-end', id: 't0' },
    { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
  ] as StreamPart[];
}

/** The SDK's mock model streaming `parts` (the next list per call when given several), `delayMs` apart. */
export function mockModel(calls: readonly StreamPart[][], delayMs = 0): MockLanguageModelV3 {
  let call = 0;
  return new MockLanguageModelV3({
    doStream: async () => {
      const parts = calls[Math.min(call, calls.length - 1)] as StreamPart[];
      call += 1;
      return {
        stream: simulateReadableStream<StreamPart>({
          chunks: parts,
          chunkDelayInMs: delayMs,
          initialDelayInMs: delayMs,
        }),
      };
    },
  });
}

/** A user message as `useChat` sends it. */
export function userMessage(id: string, text: string): UIMessage {
  return { id, role: 'user', parts: [{ type: 'text', text }] };
}

/**
 * The SDK's own client transport wired to `handlers` in process (no socket): POST /api/chat and
 * GET /api/chat/:id/stream, as `useChat` calls them.
 */
export function transportTo(handlers: ChatHandlers): DefaultChatTransport<UIMessage> {
  return new DefaultChatTransport<UIMessage>({
    api: 'http://chat.test/api/chat',
    fetch: async (input, init) => {
      const request = new Request(input, init);
      const path = new URL(request.url).pathname;
      if (request.method === 'POST' && path === '/api/chat') return handlers.post(request);
      const resume = /^\/api\/chat\/([^/]+)\/stream$/.exec(path);
      if (request.method === 'GET' && resume !== null) return handlers.resume(decodeURIComponent(resume[1] as string));
      return new Response('not found', { status: 404 });
    },
  });
}

/** Every chunk of `stream`, read to its end. */
export async function readAll(stream: ReadableStream<UIMessageChunk>): Promise<UIMessageChunk[]> {
  const chunks: UIMessageChunk[] = [];
  for await (const chunk of stream as unknown as AsyncIterable<UIMessageChunk>) chunks.push(chunk);
  return chunks;
}

/** `value` through JSON, as it travels on the wire and sits in the journal (undefined members dropped). */
export function json<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/**
 * The SDK's mock model streaming `parts`, which stops before part `holdAt` until `release()` is called: a run that is
 * still active for as long as a test needs, whatever the machine's speed.
 */
export function heldModel(
  parts: readonly StreamPart[],
  holdAt: number,
): { model: MockLanguageModelV3; release: () => void } {
  let release = (): void => undefined;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const model = new MockLanguageModelV3({
    doStream: async () => {
      let next = 0;
      const stream = new ReadableStream<StreamPart>({
        async pull(controller) {
          if (next === holdAt) await held;
          const part = parts[next];
          next += 1;
          if (part === undefined) controller.close();
          else controller.enqueue(part);
        },
      });
      return { stream };
    },
  });
  return { model, release };
}
