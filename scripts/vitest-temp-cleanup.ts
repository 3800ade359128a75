// Removes, after each test file, the temporary directories its tests made directly under the system temporary
// directory with `mkdtempSync` (the tests' `tempDir()` helpers and the rest): one run of the suite left thousands of
// them behind, and a developer's or a CI machine's /tmp filled up run after run. A file with a failing
// test keeps its directories, for whoever looks into the failure, and `TJ_KEEP_TMP=1` keeps them all. Directories
// that child processes make (the CLI, adapters) are theirs to remove; the conformance runner removes its own.
// The system temporary directory itself is left as it is: pointing TMPDIR elsewhere for a run also moved the compile
// cache of the `tsx` processes some tests start, and one of them failed in CI (stop 31).
import type * as NodeFs from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, resolve } from 'node:path';
import { afterAll, afterEach } from 'vitest';

/** `node:fs` itself, whose members can be replaced (a module namespace's cannot). */
const fs = createRequire(import.meta.url)('node:fs') as { -readonly [K in keyof typeof NodeFs]: (typeof NodeFs)[K] };
const system = resolve(tmpdir());
const made: string[] = [];
let failed = false;
const original = fs.mkdtempSync;
const recording = ((prefix: string, options?: unknown) => {
  const dir = original(prefix, options as NodeFs.EncodingOption);
  if (typeof dir === 'string' && resolve(dirname(dir)) === system) made.push(dir);
  return dir;
}) as typeof fs.mkdtempSync;
fs.mkdtempSync = recording;
// Named imports of `node:fs` (`import { mkdtempSync } from 'node:fs'`) follow the module object only after this.
syncBuiltinESMExports();

afterEach((context) => {
  if (context.task.result?.state === 'fail') failed = true;
});

afterAll(() => {
  if (fs.mkdtempSync === recording) {
    fs.mkdtempSync = original;
    syncBuiltinESMExports();
  }
  if (failed || process.env.TJ_KEEP_TMP === '1') return;
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
});
