import type { LanguageModel } from 'ai';

/** The mock model's answer to `prompt`, word by word. */
export declare function mockAnswer(prompt: string): string[];
/** The gateway's model with AI_GATEWAY_API_KEY, else the mock model. */
export declare function chooseModel(options?: { wordDelayMs?: number }): LanguageModel;
