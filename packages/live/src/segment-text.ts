/** Text held as separate tokens before they are joined into one piece: a bound on the per-token overhead kept. */
const PIECE_CHARS = 16 * 1024;

/**
 * The text of an open segment, built token by token. `text += token` made V8 a rope: a node per token over a string
 * of its own, kept until something flattened it, so a segment streamed in tiny tokens held many times its length
 * (packages/live/README.md gives the figures). Here tokens are joined into one flat piece every {@link PIECE_CHARS}
 * characters, so the text costs about its length plus one piece's tokens, and reading it whole joins the pieces once
 * (and keeps that).
 */
export class SegmentText {
  /** Joined pieces, in order. */
  #pieces: string[] = [];
  /** Tokens since the last join, and their length. */
  #recent: string[] = [];
  #recentChars = 0;
  #length = 0;

  constructor(text = '') {
    if (text !== '') this.append(text);
  }

  /** UTF-16 units held. */
  get length(): number {
    return this.#length;
  }

  /** Adds `text` at the end. */
  append(text: string): void {
    if (text === '') return;
    this.#recent.push(text);
    this.#recentChars += text.length;
    this.#length += text.length;
    if (this.#recentChars >= PIECE_CHARS) {
      this.#pieces.push(this.#recent.join(''));
      this.#recent = [];
      this.#recentChars = 0;
    }
  }

  /** The whole text, as one flat string (kept as the only piece, so a second read before the next token is free). */
  toString(): string {
    if (this.#recent.length > 0) {
      this.#pieces.push(this.#recent.join(''));
      this.#recent = [];
      this.#recentChars = 0;
    }
    // One join, never `a + b`: that makes a rope node again.
    if (this.#pieces.length !== 1) this.#pieces = [this.#pieces.join('')];
    return this.#pieces[0] as string;
  }
}
