// Text output reaches a terminal, and file names, ids, type names and messages come from the files read (or from an
// adapter): an ANSI escape or a raw control character in any of them must not act on the terminal. Every line of text
// output goes through escapeControls, the way content excerpts are JSON-escaped.

// C0 controls, DEL, C1 controls (U+009B is a one-byte CSI on some terminals), the line and paragraph separators and
// the bidirectional overrides and isolates (which reorder what is shown).
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** The text with every control character written as a visible escape (`\x1b`, `\n`, `\u202e`). */
export function escapeControls(text: string): string {
  return text.replace(UNSAFE, (c) => {
    if (c === '\n') return '\\n';
    if (c === '\r') return '\\r';
    if (c === '\t') return '\\t';
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** One output line, escaped, with its LF: {@link textLines} of one line. */
export function textLine(line: string): string {
  return `${escapeControls(line)}\n`;
}

/** Joins output lines into text, escaping each line first (so a name with a newline cannot forge a line). */
export function textLines(lines: readonly string[]): string {
  return `${lines.map(escapeControls).join('\n')}\n`;
}
