// Builds the workspace (incrementally) before any test runs, so tests that run the built CLI never see stale dist,
// and copies the files packages ship beside their code (fixtures, spec, schemas), as `build` does.
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  execFileSync(join(root, 'node_modules/.bin/tsc'), ['-b', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
  execFileSync(process.execPath, [join(root, 'scripts/package-assets.mjs')], { cwd: root, stdio: 'inherit' });
}
