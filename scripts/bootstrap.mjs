#!/usr/bin/env node
// Makes a fresh clone usable with nothing but Node and npm: installs the workspace with the
// exact pnpm named in package.json (through npx, so no global install is needed) and builds it.
// Both steps are skipped when nothing they depend on changed since they last succeeded: a stamp in
// node_modules records a content hash of the install inputs (lockfile, manifests, pnpm and Node
// versions) and of the build inputs (every source, tsconfig and shipped data file). A changed byte
// in any of them reruns the step; a missing output (node_modules, a package's dist) reruns it too.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { packageManager } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
if (typeof packageManager !== 'string' || !packageManager.startsWith('pnpm@')) {
  console.error(
    `bootstrap: package.json "packageManager" must name an exact pnpm version, got ${JSON.stringify(packageManager)}`,
  );
  process.exit(2);
}
const force = process.argv.includes('--force') || process.env.TJ_BOOTSTRAP_FORCE === '1';
const stampPath = join(root, 'node_modules', '.turnjournal-bootstrap.json');

function run(command, args) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
  if (result.status !== 0) {
    console.error(`bootstrap: \`${command} ${args.join(' ')}\` failed (exit ${result.status ?? result.signal})`);
    process.exit(result.status ?? 1);
  }
}

/** Every file under `dir` (recursively), skipping node_modules and build output. */
function filesUnder(dir) {
  if (!existsSync(dir)) return [];
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

/** A hash of the names and bytes of the files, plus extra strings. */
function digest(files, extra = []) {
  const hash = createHash('sha256');
  for (const value of extra) hash.update(`${value}\0`);
  for (const file of [...files].sort()) {
    hash.update(`${relative(root, file)}\0`);
    hash.update(existsSync(file) ? readFileSync(file) : '\0missing\0');
  }
  return hash.digest('hex');
}

const packageDirs = readdirSync(join(root, 'packages'))
  .map((name) => join(root, 'packages', name))
  .filter((dir) => existsSync(join(dir, 'package.json')));
const rootFiles = readdirSync(root).filter((name) => statSync(join(root, name)).isFile());

const installKey = digest(
  [
    join(root, 'pnpm-lock.yaml'),
    join(root, 'pnpm-workspace.yaml'),
    join(root, 'package.json'),
    ...packageDirs.map((dir) => join(dir, 'package.json')),
  ],
  [packageManager, process.version, process.env.CI ? 'frozen' : ''],
);
const buildKey = digest(
  [
    ...rootFiles.filter((name) => /^tsconfig.*\.json$/.test(name)).map((name) => join(root, name)),
    join(root, 'LICENSE'),
    join(root, 'scripts/package-assets.mjs'),
    ...packageDirs.flatMap((dir) => [
      join(dir, 'tsconfig.json'),
      join(dir, 'package.json'),
      ...filesUnder(join(dir, 'src')),
    ]),
    ...filesUnder(join(root, 'spec/v1')),
    ...filesUnder(join(root, 'fixtures')),
  ],
  [installKey],
);

/** The built entry points every package publishes: when one is missing, the build must run. */
function buildOutputsPresent() {
  return packageDirs.every((dir) => {
    const { exports = {} } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    return Object.values(exports).every(
      (target) => typeof target !== 'object' || existsSync(join(dir, target.default)),
    );
  });
}

let stamp = {};
try {
  stamp = JSON.parse(readFileSync(stampPath, 'utf8'));
} catch {
  stamp = {};
}
const installed = !force && stamp.install === installKey && existsSync(join(root, 'node_modules/.modules.yaml'));
const built = installed && stamp.build === buildKey && buildOutputsPresent();
if (built) process.exit(0);

if (!installed) {
  const frozen = process.env.CI ? ['--frozen-lockfile'] : [];
  run('npx', ['--yes', packageManager, 'install', '--prefer-offline', ...frozen]);
}
run('npx', ['--yes', packageManager, 'run', 'build']);
writeFileSync(stampPath, `${JSON.stringify({ install: installKey, build: buildKey }, null, 2)}\n`);
