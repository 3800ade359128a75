// Writes every generated artefact of the repository; with --check, writes nothing and fails when a committed
// artefact differs from what its source now produces (CI runs the --check twin).
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FROZEN_FIXTURES_PATH, freezeNewFixtures } from '../packages/conformance/src/requirements/frozen-fixtures.ts';
import { ApiSnapshotError } from './api-snapshot.ts';
import { generatedArtefacts } from './generated-artefacts.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const check = process.argv.includes('--check');
const stale: string[] = [];
const refused: string[] = [];

// The frozen list of gold fixture files is append-only: generation adds new files and never rewrites an entry, so an
// edited gold file keeps failing the frozen-fixtures test (fixtures/README.md, "Gold files").
const frozenList = { path: `fixtures/${FROZEN_FIXTURES_PATH}`, build: () => freezeNewFixtures(join(root, 'fixtures')) };

for (const artefact of [...generatedArtefacts(root), frozenList]) {
  const path = join(root, artefact.path);
  let wanted: string;
  try {
    wanted = artefact.build();
  } catch (error) {
    // A public signature naming a type users cannot import: every such line of every package, then a failure.
    if (!(error instanceof ApiSnapshotError)) throw error;
    refused.push(...error.offences);
    continue;
  }
  let current: string | undefined;
  try {
    current = readFileSync(path, 'utf8');
  } catch {
    current = undefined;
  }
  if (current === wanted) continue;
  if (check) stale.push(relative(root, path));
  else {
    writeFileSync(path, wanted);
    console.log(`generated ${artefact.path}`);
  }
}

if (refused.length > 0) {
  console.error(refused.join('\n'));
  process.exit(1);
}

if (check) {
  if (stale.length > 0) {
    console.error(
      `stale generated files (run \`pnpm generate\` and commit):\n${stale.map((p) => `  ${p}`).join('\n')}`,
    );
    process.exit(1);
  }
  console.log('generated files are up to date');
}
