import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { ConformanceError } from '../errors.js';
import { listFixtureFiles } from '../fixtures/load-fixtures.js';

/** Where the frozen list of the v1 gold fixture files lives, relative to the fixtures root. */
export const FROZEN_FIXTURES_PATH = 'v1/FROZEN.sha256';

/** Spec versions whose fixture files are gold: once listed, a file never changes. */
const FROZEN_VERSIONS = ['v1/'];

/** One frozen fixture file: its path relative to the fixtures root and the SHA-256 of its bytes. */
export interface FrozenFixture {
  /** Path relative to the fixtures root, with `/` separators, e.g. `v1/store/framing.json`. */
  readonly path: string;
  /** SHA-256 of the file's bytes, lowercase hex. */
  readonly sha256: string;
}

/**
 * Parses the frozen list: `sha256sum` format, one `<64 hex>  <path>` per line (so `cd fixtures && sha256sum -c
 * v1/FROZEN.sha256` verifies a copy with no turnjournal code); lines starting with `#` are comments.
 */
export function parseFrozenList(text: string): FrozenFixture[] {
  const out: FrozenFixture[] = [];
  const seen = new Set<string>();
  for (const [index, line] of text.split('\n').entries()) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const match = /^([0-9a-f]{64}) {2}(\S.*)$/.exec(line);
    if (match === null)
      throw new ConformanceError(
        'invalid_frozen_list',
        `line ${index + 1}: expected "<sha256>  <path>", got "${line}"`,
      );
    const [, sha256 = '', path = ''] = match;
    if (seen.has(path)) throw new ConformanceError('invalid_frozen_list', `line ${index + 1}: ${path} is listed twice`);
    seen.add(path);
    out.push({ path, sha256 });
  }
  return out;
}

/** The text of a frozen list: a comment header, then one `sha256sum` line per file, in the given order. */
export function formatFrozenList(files: readonly FrozenFixture[]): string {
  const header = [
    '# Frozen gold fixture files of spec v1 (fixtures/README.md, "Gold files"): sha256sum format, paths relative to',
    '# fixtures/. A listed file never changes; a changed expectation is a new case in a new file. Verify a copy with',
    '# `cd fixtures && grep -v "^#" v1/FROZEN.sha256 | sha256sum -c`. New files are appended by `pnpm generate`.',
  ];
  return `${[...header, ...files.map((f) => `${f.sha256}  ${f.path}`)].join('\n')}\n`;
}

/** SHA-256 of every gold fixture file under `fixturesRoot` (the files of the frozen spec versions), sorted by path. */
export function currentGoldFixtures(fixturesRoot: string): FrozenFixture[] {
  return listFixtureFiles(fixturesRoot)
    .map((path) => relative(fixturesRoot, path).split(sep).join('/'))
    .filter((path) => FROZEN_VERSIONS.some((version) => path.startsWith(version)))
    .map((path) => ({
      path,
      sha256: createHash('sha256')
        .update(readFileSync(join(fixturesRoot, path)))
        .digest('hex'),
    }));
}

/** What {@link checkFrozenFixtures} found. */
export interface FrozenFixturesCheck {
  /** Frozen files whose bytes changed: each is a violation. */
  readonly changed: readonly string[];
  /** Frozen files that are gone: each is a violation. */
  readonly removed: readonly string[];
  /** Gold files not in the list yet (new files): `pnpm generate` freezes them. */
  readonly unfrozen: readonly string[];
}

/** Compares the gold fixture files on disk with the frozen list (a missing list freezes nothing). */
export function checkFrozenFixtures(fixturesRoot: string): FrozenFixturesCheck {
  const listPath = join(fixturesRoot, FROZEN_FIXTURES_PATH);
  const frozen = existsSync(listPath) ? parseFrozenList(readFileSync(listPath, 'utf8')) : [];
  const current = new Map(currentGoldFixtures(fixturesRoot).map((f) => [f.path, f.sha256]));
  const listed = new Set(frozen.map((f) => f.path));
  return {
    changed: frozen.filter((f) => current.has(f.path) && current.get(f.path) !== f.sha256).map((f) => f.path),
    removed: frozen.filter((f) => !current.has(f.path)).map((f) => f.path),
    unfrozen: [...current.keys()].filter((path) => !listed.has(path)),
  };
}

/**
 * The frozen list with every new gold file appended (sorted among themselves) and every existing entry kept exactly
 * as it was, even when the file changed: freezing never legitimises an edit. Returns the text to write.
 */
export function freezeNewFixtures(fixturesRoot: string): string {
  const listPath = join(fixturesRoot, FROZEN_FIXTURES_PATH);
  const frozen = existsSync(listPath) ? parseFrozenList(readFileSync(listPath, 'utf8')) : [];
  const listed = new Set(frozen.map((f) => f.path));
  const added = currentGoldFixtures(fixturesRoot).filter((f) => !listed.has(f.path));
  return formatFrozenList([...frozen, ...added]);
}
