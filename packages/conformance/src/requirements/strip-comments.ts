/**
 * The text of a TypeScript/JavaScript source with every comment blanked out (replaced by spaces, newlines kept), and
 * strings, template literals and regular expressions left as they are. The coverage check reads requirement ids from
 * what remains: a comment asserts nothing, so an id that only a comment names is not covered (TJ-CONF-006).
 *
 * A small scanner rather than a parser, on purpose: the published kit must not depend on a compiler. It knows the
 * lexical forms that can hide `//` or `/*`: quotes, templates with `${…}` nesting, and regex literals (recognised by
 * the token before the slash, the usual heuristic).
 */
export function stripComments(source: string): string {
  const out: string[] = [];
  const templateDepth: number[] = []; // brace depth at each open `${`
  let braces = 0;
  let i = 0;
  let last = ''; // last significant code character, to tell a regex from a division
  const n = source.length;
  const blank = (from: number, to: number) => {
    for (let k = from; k < to; k++) out.push(source[k] === '\n' ? '\n' : ' ');
  };
  const copyQuoted = (quote: string) => {
    const start = i;
    i++;
    while (i < n && source[i] !== quote && source[i] !== '\n') i += source[i] === '\\' ? 2 : 1;
    i++;
    out.push(source.slice(start, Math.min(i, n)));
  };
  // Copies template text from i (just after ` or }) up to and including the closing ` or the opening ${.
  const copyTemplate = () => {
    const start = i;
    while (i < n) {
      if (source[i] === '\\') i += 2;
      else if (source[i] === '`') {
        i++;
        break;
      } else if (source[i] === '$' && source[i + 1] === '{') {
        i += 2;
        templateDepth.push(braces);
        braces++;
        break;
      } else i++;
    }
    out.push(source.slice(start, Math.min(i, n)));
  };
  while (i < n) {
    const c = source[i] as string;
    const next = source[i + 1];
    if (c === '/' && next === '/') {
      const end = source.indexOf('\n', i);
      const stop = end === -1 ? n : end;
      blank(i, stop);
      i = stop;
    } else if (c === '/' && next === '*') {
      const end = source.indexOf('*/', i + 2);
      const stop = end === -1 ? n : end + 2;
      blank(i, stop);
      i = stop;
    } else if (c === "'" || c === '"') {
      copyQuoted(c);
      last = 'a';
    } else if (c === '`') {
      out.push('`');
      i++;
      copyTemplate();
      last = 'a';
    } else if (c === '/' && (last === '' || '(,=:[!&|?{};+-*%<>~^'.includes(last))) {
      // A regex literal: copy to its closing slash, minding escapes and character classes.
      const start = i;
      i++;
      let inClass = false;
      while (i < n && source[i] !== '\n') {
        const r = source[i];
        if (r === '\\') i += 2;
        else {
          if (r === '[') inClass = true;
          else if (r === ']') inClass = false;
          else if (r === '/' && !inClass) break;
          i++;
        }
      }
      i++;
      out.push(source.slice(start, Math.min(i, n)));
      last = 'a';
    } else {
      if (c === '{') braces++;
      else if (c === '}') {
        braces--;
        if (templateDepth.length > 0 && templateDepth[templateDepth.length - 1] === braces) {
          templateDepth.pop();
          out.push('}');
          i++;
          copyTemplate();
          last = 'a';
          continue;
        }
      }
      out.push(c);
      if (!/\s/.test(c)) last = /[A-Za-z0-9_$)\]]/.test(c) ? 'a' : c;
      i++;
    }
  }
  return out.join('');
}
