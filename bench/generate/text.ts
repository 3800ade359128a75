import type { Prng } from './prng.js';

// Words of chat-like text: mostly ASCII, some accented letters, CJK, emoji, code, quotes and backslashes, so
// JSON.stringify escapes and UTF-8 multi-byte sequences appear as in real journals.
const WORDS = [
  'the',
  'a',
  'to',
  'of',
  'and',
  'in',
  'is',
  'it',
  'that',
  'for',
  'on',
  'with',
  'as',
  'this',
  'be',
  'are',
  'not',
  'can',
  'you',
  'please',
  'summarise',
  'report',
  'function',
  'error',
  'test',
  'failing',
  'build',
  'deploy',
  'server',
  'request',
  'response',
  'latency',
  'journal',
  'record',
  'session',
  'turn',
  'message',
  'assistant',
  'user',
  'model',
  'context',
  'window',
  'tokens',
  'stream',
  'delta',
  'checkpoint',
  'recovery',
  'crash',
  'fsync',
  'disk',
  'file',
  'why',
  'how',
  'what',
  'when',
  'explain',
  'refactor',
  'rename',
  'variable',
  'import',
  'export',
  'module',
  'package',
  'café',
  'naïve',
  'résumé',
  'Straße',
  'größer',
  '日本語',
  '数据',
  '测试',
  'привет',
  'мир',
  '🙂',
  '🚀',
  '✅',
  '"quoted"',
  "it's",
  'path\\to\\file',
  'C:\\Users\\me',
  '`npm test`',
  '`pnpm -r build`',
  '{"key": 1}',
  '<div>',
  'x = y + 1;',
  'if (a && b)',
  'SELECT * FROM t;',
  'https://example.com/docs',
  'v1.2.3',
  '42',
  '3.14',
  '2026-05-11',
];
const PUNCTUATION = ['.', '.', '.', '?', '!', ',', ',', ':', ';'];

/** A deterministic corpus of chat-like text of about `chars` characters (UTF-16 code units). */
export function makeCorpus(prng: Prng, chars: number): string {
  const parts: string[] = [];
  let length = 0;
  let sentence = 0;
  while (length < chars) {
    let word = prng.pick(WORDS);
    if (sentence === 0) word = word.charAt(0).toUpperCase() + word.slice(1);
    sentence += 1;
    let piece = word;
    if (sentence > 4 && prng.chance(0.15)) {
      piece += prng.pick(PUNCTUATION);
      sentence = 0;
      if (prng.chance(0.1)) piece += '\n';
      if (prng.chance(0.02)) piece += '\n```\nconst x = 1;\n```\n';
    }
    parts.push(piece);
    length += piece.length + 1;
  }
  return parts.join(' ');
}

/** A slice of the corpus of `length` code units, not splitting a surrogate pair. */
export function sliceText(prng: Prng, corpus: string, length: number): string {
  let start = prng.int(0, corpus.length - length - 2);
  if (isLowSurrogate(corpus.charCodeAt(start))) start += 1;
  let end = start + length;
  if (isLowSurrogate(corpus.charCodeAt(end))) end += 1;
  return corpus.slice(start, end);
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
