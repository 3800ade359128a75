// Makes sure the workspace is installed and built before any test runs (tests run the built CLI, which must never be
// stale), through the same incremental bootstrap as `npm test`: nothing is rebuilt when no input changed, and a
// changed source rebuilds the packages and recopies the files they ship (fixtures, spec, schemas).
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  execFileSync(process.execPath, [join(root, 'scripts/bootstrap.mjs')], { cwd: root, stdio: 'inherit' });
}
