// The model of the example: the AI SDK's own mock model (from `ai/test`), deterministic, so that the example and its
// tests need no API key; a real one through the AI SDK's gateway when AI_GATEWAY_API_KEY is set (AI_MODEL picks it).
import { simulateReadableStream } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';

/** The answer of the mock model to `prompt`: a few sentences, word by word. */
export function mockAnswer(prompt) {
  const words = `You said: "${prompt}". This answer comes from the AI SDK's mock model, one word at a time, and every
    word is in the journal before your browser sees it. Reload the page while it streams: the answer continues in the
    same bubble. Kill the server: after a restart the words streamed so far are still here, marked interrupted.`;
  return words.split(/\s+/).map((word) => `${word} `);
}

/** A language model: the gateway's `AI_MODEL` (default openai/gpt-5-mini) with a key, else the mock model. */
export function chooseModel({ wordDelayMs = 60 } = {}) {
  if (process.env.AI_GATEWAY_API_KEY) return process.env.AI_MODEL ?? 'openai/gpt-5-mini';
  return new MockLanguageModelV3({
    doStream: async ({ prompt }) => {
      const last = prompt.findLast((message) => message.role === 'user');
      const text = (last?.content ?? []).map((part) => (part.type === 'text' ? part.text : '')).join('');
      const words = mockAnswer(text);
      return {
        stream: simulateReadableStream({
          chunkDelayInMs: wordDelayMs,
          chunks: [
            { type: 'stream-start', warnings: [] },
            { type: 'text-start', id: 'text-1' },
            ...words.map((delta) => ({ type: 'text-delta', id: 'text-1', delta })),
            { type: 'text-end', id: 'text-1' },
            {
              type: 'finish',
              finishReason: { unified: 'stop', raw: 'stop' },
              usage: {
                inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
                outputTokens: { total: words.length, text: words.length, reasoning: undefined },
              },
            },
          ],
        }),
      };
    },
  });
}
