// The coverage gate credits a test file only with the requirement ids its code names (titles, data, expectations),
// never with ids a comment names: a comment checks nothing (TJ-CONF-006).
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { collectTestCitations } from '../../src/requirements/coverage.js';
import { stripComments } from '../../src/requirements/strip-comments.js';

/** Source text is written with `#{` for `${`, so that the lint rule against `${` in plain strings stays quiet. */
const src = (lines: string[]) => lines.join('\n').replaceAll('#{', '$' + '{');

describe('test citations for the coverage gate (TJ-CONF-006)', () => {
  it('counts ids in test titles and data, not in line, block or doc comments', () => {
    const root = mkdtempSync(join(tmpdir(), 'tj-citations-'));
    mkdirSync(join(root, 'packages/x/test'), { recursive: true });
    writeFileSync(
      join(root, 'packages/x/test/a.test.ts'),
      src([
        '/** A helper whose doc names TJ-A-001. */',
        '// TJ-A-002 in a line comment',
        "it('keeps order (TJ-A-003)', () => {",
        '  /* TJ-A-004 in a block comment */',
        "  expect(ids).toContain('TJ-A-005'); // trailing TJ-A-006",
        '  const title = `#{mode} mode (TJ-A-007#{mode === "group" ? ", TJ-A-008" : ""})`;',
        "  const url = 'http://example.com/TJ-A-009';",
        '});',
      ]),
    );
    const cited = [...collectTestCitations(root).keys()].sort();
    expect(cited).toEqual(['TJ-A-003', 'TJ-A-005', 'TJ-A-007', 'TJ-A-008', 'TJ-A-009']);
  });

  it('leaves strings, templates and regular expressions that look like comments intact', () => {
    const source = src([
      "const a = 'not // a comment'; // gone",
      'const b = "/* not a comment */";',
      'const c = `x #{`nested // kept`} // kept too`; /* gone */',
      'const d = /\\/\\/ kept/.test(s) ? 1 / 2 : 3; // gone',
      'const e = { f: `#{{ g: 1 }.g} }` }; // gone',
    ]);
    expect(
      stripComments(source)
        .split('\n')
        .map((l) => l.trimEnd()),
    ).toEqual([
      "const a = 'not // a comment';",
      'const b = "/* not a comment */";',
      src(['const c = `x #{`nested // kept`} // kept too`;']),
      'const d = /\\/\\/ kept/.test(s) ? 1 / 2 : 3;',
      src(['const e = { f: `#{{ g: 1 }.g} }` };']),
    ]);
  });

  it('keeps line numbers: a comment is blanked, its newlines stay', () => {
    expect(stripComments('a /* x\ny */ b\n// z\nc')).toBe('a     \n     b\n    \nc');
  });
});
