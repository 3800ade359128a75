/** The scripted answer of the fake model: two assistant segments around one tool call. */
export function fakeScript(prompt: string): {
  first: string[];
  tool: { tool: string; args: { query: string }; output: string };
  second: string[];
};
/** The committed texts of an uninterrupted answer. */
export function fakeAnswer(prompt: string): { first: string; tool: string; second: string };
/** The fake model. */
export function createFakeModel(options?: { tokenMs?: number; holds?: boolean }): {
  name: string;
  stream(prompt: string, options?: { signal?: AbortSignal }): AsyncIterable<unknown>;
  whenHeld(): Promise<void>;
  release(): number;
};
