#!/usr/bin/env node
// Makes a fresh clone usable with nothing but Node and npm: installs the workspace with the
// exact pnpm named in package.json (through npx, so no global install is needed) and builds it.
// Both steps are incremental, so running this before every command costs about a second.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { packageManager } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
if (typeof packageManager !== 'string' || !packageManager.startsWith('pnpm@')) {
  console.error(
    `bootstrap: package.json "packageManager" must name an exact pnpm version, got ${JSON.stringify(packageManager)}`,
  );
  process.exit(2);
}

function run(command, args) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
  if (result.status !== 0) {
    console.error(`bootstrap: \`${command} ${args.join(' ')}\` failed (exit ${result.status ?? result.signal})`);
    process.exit(result.status ?? 1);
  }
}

const frozen = process.env.CI ? ['--frozen-lockfile'] : [];
run('npx', ['--yes', packageManager, 'install', '--prefer-offline', ...frozen]);
run('npx', ['--yes', packageManager, 'run', 'build']);
