// Writes every generated artefact of the repository; with --check, writes nothing and fails when a committed
// artefact differs from what its source now produces (CI runs the --check twin).
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatedArtefacts } from './generated-artefacts.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const check = process.argv.includes('--check');
const stale: string[] = [];

for (const artefact of generatedArtefacts(root)) {
  const path = join(root, artefact.path);
  const wanted = artefact.build();
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

if (check) {
  if (stale.length > 0) {
    console.error(
      `stale generated files (run \`pnpm generate\` and commit):\n${stale.map((p) => `  ${p}`).join('\n')}`,
    );
    process.exit(1);
  }
  console.log('generated files are up to date');
}
