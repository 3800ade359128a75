// The list of generated artefacts and how each is built from its source. Kept apart from generate.ts so tests can
// build an artefact in memory and compare it with the committed file.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { buildFixtureManifest, FixtureFile, loadFixtures } from '../packages/conformance/src/fixtures/index.ts';
import { parseRequirements } from '../packages/conformance/src/requirements/parse-requirements.ts';
import {
  buildRequirementsMap,
  citedRequirementIds,
} from '../packages/conformance/src/requirements/requirements-map.ts';
import { buildJsonSchema, SCHEMA_DIALECT } from '../packages/schema/src/v1/json-schema.ts';
import { Report } from '../packages/schema/src/v1/report.ts';

/** One generated file: its path from the repository root and the function that produces its exact text. */
export interface GeneratedArtefact {
  readonly path: string;
  readonly build: () => string;
}

/** Stable JSON text: two-space indent and a final newline. */
export function jsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** Every generated artefact, in the order they are written. */
export function generatedArtefacts(root: string): GeneratedArtefact[] {
  const fixturesRoot = join(root, 'fixtures');
  const specPath = join(root, 'spec/v1/spec.md');
  return [
    { path: 'spec/v1/schema.json', build: () => jsonText(buildJsonSchema()) },
    {
      path: 'spec/v1/report.schema.json',
      build: () => jsonText({ $schema: SCHEMA_DIALECT, ...JSON.parse(JSON.stringify(Report)) }),
    },
    {
      path: 'fixtures/fixture.schema.json',
      build: () => jsonText({ $schema: SCHEMA_DIALECT, ...JSON.parse(JSON.stringify(FixtureFile)) }),
    },
    { path: 'fixtures/manifest.json', build: () => jsonText(buildFixtureManifest(loadFixtures(fixturesRoot))) },
    {
      path: 'spec/v1/requirements.json',
      build: () => {
        if (!existsSync(specPath)) throw new Error(`${specPath} is missing`);
        const requirements = parseRequirements(readFileSync(specPath, 'utf8'));
        return jsonText(buildRequirementsMap(requirements, loadFixtures(fixturesRoot), testCitations(root)));
      },
    },
  ];
}

/** Which test files cite each requirement id (in test names or comments), for the requirements map. */
function testCitations(root: string): Map<string, string[]> {
  const citations = new Map<string, string[]>();
  const visit = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) visit(path);
      else if (entry.name.endsWith('.test.ts')) {
        const file = relative(root, path).split(sep).join('/');
        for (const id of citedRequirementIds(readFileSync(path, 'utf8')))
          citations.set(id, [...(citations.get(id) ?? []), file]);
      }
    }
  };
  for (const pkg of readdirSync(join(root, 'packages'))) {
    const tests = join(root, 'packages', pkg, 'test');
    if (existsSync(tests)) visit(tests);
  }
  return citations;
}
