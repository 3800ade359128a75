// The list of generated artefacts and how each is built from its source. Kept apart from generate.ts so tests can
// build an artefact in memory and compare it with the committed file.
import { join } from 'node:path';
import { AdapterMessages } from '../packages/conformance/src/adapter/protocol.ts';
import { ConformanceReport } from '../packages/conformance/src/adapter/report.ts';
import { CompactOutput, RecoverOutput, ValidateOutput } from '../packages/conformance/src/cli/output-schemas.ts';
import { buildFixtureManifest, FixtureFile, loadFixtures } from '../packages/conformance/src/fixtures/index.ts';
import { buildRepositoryRequirementsMap } from '../packages/conformance/src/requirements/coverage.ts';
import { buildJsonSchema, SCHEMA_DIALECT } from '../packages/schema/src/v1/json-schema.ts';
import { Report } from '../packages/schema/src/v1/report.ts';
import { apiSnapshot, SNAPSHOT_PACKAGES } from './api-snapshot.ts';

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
  return [
    { path: 'spec/v1/schema.json', build: () => jsonText(buildJsonSchema()) },
    // The Python library validates records against its own copy (it installs from pip without the spec/ tree).
    { path: 'python/src/turnjournal/v1/schema.json', build: () => jsonText(buildJsonSchema()) },
    {
      path: 'spec/v1/report.schema.json',
      build: () => jsonText({ $schema: SCHEMA_DIALECT, ...JSON.parse(JSON.stringify(Report)) }),
    },
    {
      path: 'spec/v1/adapter.schema.json',
      build: () => jsonText({ $schema: SCHEMA_DIALECT, ...JSON.parse(JSON.stringify(AdapterMessages)) }),
    },
    {
      path: 'spec/v1/conformance-report.schema.json',
      build: () => jsonText({ $schema: SCHEMA_DIALECT, ...JSON.parse(JSON.stringify(ConformanceReport)) }),
    },
    ...(
      [
        ['recover', RecoverOutput],
        ['compact', CompactOutput],
        ['validate', ValidateOutput],
      ] as const
    ).map(([command, schema]) => ({
      path: `spec/v1/${command}.schema.json`,
      build: () => jsonText({ $schema: SCHEMA_DIALECT, ...JSON.parse(JSON.stringify(schema)) }),
    })),
    {
      path: 'fixtures/fixture.schema.json',
      build: () => jsonText({ $schema: SCHEMA_DIALECT, ...JSON.parse(JSON.stringify(FixtureFile)) }),
    },
    { path: 'fixtures/manifest.json', build: () => jsonText(buildFixtureManifest(loadFixtures(fixturesRoot))) },
    {
      path: 'spec/v1/requirements.json',
      // Test citations and the manual list (spec/v1/requirements-manual.json) are read by the same code as the
      // coverage check (scripts/check-coverage.ts), so the committed map and the CI check never disagree.
      build: () => jsonText(buildRepositoryRequirementsMap(root)),
    },
    // The public API of every published package: a new, removed or changed export shows as a diff of this file.
    ...SNAPSHOT_PACKAGES.map((name) => ({
      path: `packages/${name}/api.txt`,
      build: () => apiSnapshot(root, name) ?? '',
    })),
  ];
}
