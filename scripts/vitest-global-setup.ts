// Makes sure the workspace is installed and built before any test runs (tests run the built CLI, which must never be
// stale), through the same incremental bootstrap as `npm test`: nothing is rebuilt when no input changed, and a
// changed source rebuilds the packages and recopies the files they ship (fixtures, spec, schemas).
//
// It also gives the run a temporary directory of its own and removes it at the end. Tests make their directories with
// `os.tmpdir()`, in the workers and in the processes they start (the CLI, adapters, Python), which all read `TMPDIR`;
// a run left about 5,000 of them (0.7 GB) in the system's temporary directory, and a developer's machine had 235,693
// (23 GB) after a few weeks. `TJ_KEEP_TMP=1` keeps the run's directory, to look at what a failing test wrote.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export default function setup(): () => void {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  execFileSync(process.execPath, [join(root, 'scripts/bootstrap.mjs')], { cwd: root, stdio: 'inherit' });
  const previous = process.env.TMPDIR;
  const runDir = mkdtempSync(join(tmpdir(), 'tj-test-run-'));
  process.env.TMPDIR = runDir;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    if (process.env.TJ_KEEP_TMP === '1') console.log(`temporary files of this run kept in ${runDir}`);
    else rmSync(runDir, { recursive: true, force: true });
  };
}
