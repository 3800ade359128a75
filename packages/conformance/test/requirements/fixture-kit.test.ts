// Checks of the fixture kit itself (spec §17.2): what any runner in any language may rely on.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import {
  checkFrozenFixtures,
  type FixtureManifest,
  fixtureCases,
  freezeNewFixtures,
  listFixtureFiles,
  loadFixtureFile,
  parseFrozenList,
  parseRequirements,
} from '../support/internals.js';

const repo = join(import.meta.dirname, '../../../..');
const fixturesRoot = join(repo, 'fixtures');
const files = listFixtureFiles(fixturesRoot);
const rel = (path: string) => relative(fixturesRoot, path).split(sep).join('/');
// The ids of the specification and of the adapter protocol: a store fixture may cite a rule of what a `read` answers.
const specIds = new Set(
  ['spec/v1/spec.md', 'spec/v1/adapter.md'].flatMap((file) =>
    parseRequirements(readFileSync(join(repo, file), 'utf8')).map((r) => r.id),
  ),
);

describe('the fixture kit (spec §17.2)', () => {
  it('every fixture case names at least one requirement id, and each id exists in the spec or the adapter protocol (TJ-CONF-005)', () => {
    expect(files.length).toBeGreaterThan(0);
    let cases = 0;
    for (const path of files) {
      for (const fixtureCase of fixtureCases(loadFixtureFile(fixturesRoot, path).content)) {
        cases += 1;
        expect(fixtureCase.requirements.length, `${rel(path)} › ${fixtureCase.name}`).toBeGreaterThan(0);
        for (const id of fixtureCase.requirements) expect(specIds.has(id), `${rel(path)} cites ${id}`).toBe(true);
      }
    }
    expect(cases).toBeGreaterThan(600);
    // A case that names no requirement is refused by the loader (the fixture schema demands one).
    const dir = mkdtempSync(join(tmpdir(), 'tj-fixture-kit-'));
    mkdirSync(join(dir, 'v1'));
    const bad = {
      kind: 'store',
      spec: 'v1',
      description: 'x',
      cases: [{ description: 'no ids', requirements: [], files: [{ path: 'a.jsonl', text: '' }], expect: {} }],
    };
    writeFileSync(join(dir, 'v1', 'bad.json'), JSON.stringify(bad));
    expect(() => loadFixtureFile(dir, join(dir, 'v1', 'bad.json'))).toThrow(
      expect.objectContaining({ code: 'invalid_fixture_file', path: 'v1/bad.json' }),
    );
  });

  it('every fixture file is plain JSON valid against the published fixture schema, with inputs as text or hex (TJ-CONF-007)', () => {
    const schema = JSON.parse(readFileSync(join(fixturesRoot, 'fixture.schema.json'), 'utf8'));
    const validate = new Ajv2020({ strict: false }).compile(schema);
    const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
    for (const path of files) {
      // Only a JSON parser is needed: the file is UTF-8 JSON, and the published schema (not our TypeBox) accepts it.
      const content = JSON.parse(strictUtf8.decode(readFileSync(path)));
      expect(validate(content), `${rel(path)}: ${JSON.stringify(validate.errors?.slice(0, 3))}`).toBe(true);
      if (content.kind !== 'store') continue;
      for (const c of content.cases as { description: string; files: Record<string, unknown>[] }[]) {
        for (const input of c.files) {
          const forms = ['text', 'hex'].filter((k) => k in input);
          expect(forms, `${rel(path)} › ${c.description} › ${String(input.path)}`).toHaveLength(1);
          if (typeof input.hex === 'string') expect(input.hex).toMatch(/^(?:[0-9a-fA-F]{2})*$/);
        }
      }
    }
  });

  it('the manifest lists every fixture file with the SHA-256 of its bytes, and nothing else (TJ-CONF-008)', () => {
    const manifest = JSON.parse(readFileSync(join(fixturesRoot, 'manifest.json'), 'utf8')) as FixtureManifest;
    const onDisk = files.map((path) => ({
      path: rel(path),
      sha256: createHash('sha256').update(readFileSync(path)).digest('hex'),
    }));
    expect(manifest.files.map((f) => ({ path: f.path, sha256: f.sha256 }))).toEqual(onDisk);
    expect(manifest.totals.files).toBe(onDisk.length);
  });
});

describe('gold fixture files are frozen (fixtures/README.md, "Gold files")', () => {
  it('no frozen v1 fixture file changed or disappeared, and every v1 fixture file is frozen', () => {
    const result = checkFrozenFixtures(fixturesRoot);
    const advice =
      'a frozen fixture file must not change: revert it and put the new expectation in a new case of a new file';
    expect(result.changed, advice).toEqual([]);
    expect(result.removed, advice).toEqual([]);
    expect(result.unfrozen, 'new fixture files are frozen by `pnpm generate`; run it and commit').toEqual([]);
    expect(parseFrozenList(readFileSync(join(fixturesRoot, 'v1/FROZEN.sha256'), 'utf8')).length).toBe(
      files.filter((path) => rel(path).startsWith('v1/')).length,
    );
  });

  it('detects a changed frozen file, and freezing appends new files but never rewrites an entry', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tj-frozen-'));
    mkdirSync(join(dir, 'v1', 'store'), { recursive: true });
    const gold = readFileSync(files.find((p) => rel(p).startsWith('v1/store/')) as string);
    writeFileSync(join(dir, 'v1', 'store', 'a.json'), gold);
    writeFileSync(join(dir, 'v1', 'FROZEN.sha256'), freezeNewFixtures(dir));
    expect(checkFrozenFixtures(dir)).toEqual({ changed: [], removed: [], unfrozen: [] });
    // A new file may be added: it is reported as not yet frozen, and freezing appends it.
    writeFileSync(join(dir, 'v1', 'store', 'b.json'), gold);
    expect(checkFrozenFixtures(dir).unfrozen).toEqual(['v1/store/b.json']);
    const before = readFileSync(join(dir, 'v1', 'FROZEN.sha256'), 'utf8');
    const after = freezeNewFixtures(dir);
    expect(after.startsWith(before)).toBe(true);
    writeFileSync(join(dir, 'v1', 'FROZEN.sha256'), after);
    // An edited frozen file is a violation, and freezing again does not bless the edit.
    writeFileSync(join(dir, 'v1', 'store', 'a.json'), Buffer.concat([gold, Buffer.from('\n')]));
    expect(checkFrozenFixtures(dir)).toEqual({ changed: ['v1/store/a.json'], removed: [], unfrozen: [] });
    expect(freezeNewFixtures(dir)).toBe(after);
    expect(() => parseFrozenList('not a line\n')).toThrow(/expected/);
  });
});
