import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const root = dirname(fileURLToPath(import.meta.url));
// test-support is private and never built: its `exports` point at its sources already.
const packages = [
  'schema',
  'reader',
  'writer',
  'live',
  'client',
  'ai-sdk',
  'conformance',
  'postgres',
  'test-support',
] as const;

// Tests run against the TypeScript sources, not dist: each public entry of a package's `exports` map is aliased to
// the source file it is built from (dist/x.js <- src/x.ts), so the aliases cannot drift from the published surface.
function sourceAliases() {
  return packages.flatMap((name) => {
    const manifest = JSON.parse(readFileSync(join(root, 'packages', name, 'package.json'), 'utf8')) as {
      exports: Record<string, { default: string } | string>;
    };
    // Only the code entries ({types, default}); data files (JSON schemas, fixtures, the spec) resolve as published.
    const code = Object.entries(manifest.exports).filter(
      (entry): entry is [string, { default: string }] => typeof entry[1] === 'object',
    );
    return code.map(([subpath, target]) => ({
      find: new RegExp(`^@turnjournal/${name}${subpath === '.' ? '' : subpath.slice(1).replaceAll('.', '\\.')}$`),
      replacement: join(root, 'packages', name, target.default.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts')),
    }));
  });
}

export default defineConfig({
  resolve: { alias: sourceAliases() },
  test: {
    globalSetup: ['scripts/vitest-global-setup.ts'],
    setupFiles: ['scripts/vitest-temp-cleanup.ts'],
    // Many tests start the CLI or child processes (hundreds of ms each on a loaded 2-core machine): a generous
    // per-test limit keeps them from flaking; speed is measured by `pnpm bench`, never by test timeouts.
    testTimeout: 30_000,
    // One test file per core, not vitest's default of one fewer: most of a file's time is spent waiting on the child
    // processes it starts (CLI, adapters, servers, fsyncs), so on CI's 2 cores two files at a time cut the wall time
    // by over a quarter, where the default ran the files one after the other. The projects inherit this
    // value, so `--maxWorkers` on the command line does not reach them: `VITEST_MAX_WORKERS=1` runs one file at a time.
    maxWorkers: availableParallelism(),
    projects: packages.map((name) => ({
      extends: true,
      test: { name, include: [`packages/${name}/test/**/*.test.ts`] },
    })),
  },
});
