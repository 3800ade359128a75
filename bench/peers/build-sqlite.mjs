#!/usr/bin/env node
// Builds the optional SQLite peer of `pnpm bench` (better-sqlite3) from source: `npx pnpm@10.34.8 bench:peers`.
//
// Why opt-in: pnpm skips better-sqlite3's install script (`ignoredBuiltDependencies` in package.json), because that
// script first asks GitHub for a prebuilt binary (`prebuild-install`; without network it fails at once with ENOTFOUND)
// and then compiles SQLite with node-gyp, about 80 s of CPU here: too slow for every `pnpm install` in CI, and the
// benchmark is the only user. This script skips the download and runs node-gyp directly. node-gyp needs the running
// Node's headers: when the Node installation ships them (`<prefix>/include/node`, as Debian's does) they are used
// through `--nodedir`, so nothing is downloaded; otherwise node-gyp fetches them from nodejs.org. `npm_config_nodedir`
// overrides. Exit 0 when the peer loads afterwards (or already did).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(join(root, 'package.json'));

function loads() {
  try {
    const Database = require('better-sqlite3');
    const db = new Database(':memory:');
    const { v } = db.prepare('select sqlite_version() as v').get();
    db.close();
    return v;
  } catch {
    return null;
  }
}

let packageDir;
try {
  packageDir = dirname(require.resolve('better-sqlite3/package.json'));
} catch {
  console.error('bench:peers: better-sqlite3 is not installed (it is an optional dependency: run `pnpm install`)');
  process.exit(1);
}
const before = loads();
if (before !== null && !process.argv.includes('--force')) {
  console.log(`bench:peers: better-sqlite3 already built (SQLite ${before}); --force rebuilds`);
  process.exit(0);
}

/** The running Node's own headers, when its installation has them and they are of its exact version. */
function localNodeDir() {
  const prefix = join(dirname(process.execPath), '..');
  const header = join(prefix, 'include', 'node', 'node_version.h');
  if (!existsSync(header)) return null;
  const text = readFileSync(header, 'utf8');
  const part = (name) => text.match(new RegExp(`#define NODE_${name}_VERSION (\\d+)`))?.[1];
  const version = `v${part('MAJOR')}.${part('MINOR')}.${part('PATCH')}`;
  return version === process.version ? prefix : null;
}

/** node-gyp: npm's bundled copy next to this Node, else whatever npx finds. */
function nodeGyp() {
  const bundled = join(
    dirname(process.execPath),
    '..',
    'lib',
    'node_modules',
    'npm',
    'node_modules',
    'node-gyp',
    'bin',
    'node-gyp.js',
  );
  return existsSync(bundled) ? [process.execPath, bundled] : ['npx', '--yes', 'node-gyp'];
}

const nodeDir = process.env.npm_config_nodedir ?? localNodeDir();
const [command, ...prefixArgs] = nodeGyp();
const args = [...prefixArgs, 'rebuild', '--release', '-j', 'max'];
if (nodeDir !== null) args.push(`--nodedir=${nodeDir}`);
console.log(
  `bench:peers: building better-sqlite3 in ${packageDir} (${nodeDir === null ? 'headers downloaded by node-gyp' : `headers from ${nodeDir}`}); a few minutes`,
);
const result = spawnSync(command, args, { cwd: packageDir, stdio: 'inherit' });
const after = loads();
if (result.status !== 0 || after === null) {
  console.error(
    `bench:peers: the build failed (exit ${result.status}); \`pnpm bench\` reports the SQLite peer as unavailable`,
  );
  process.exit(1);
}
console.log(`bench:peers: better-sqlite3 built (SQLite ${after})`);
