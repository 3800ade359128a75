#!/usr/bin/env node
// Copies the files each package ships besides its compiled code, from their one committed source, into the package
// directory (run by `build`, so `pnpm pack` and the in-repo CLI see the same files; the copies are git-ignored):
//   LICENSE                          -> packages/*/LICENSE
//   spec/v1/*schema.json             -> packages/schema/dist/v1/   (exported as @turnjournal/schema/v1/<name>.json)
//   spec/v1/ (spec, adapter protocol, requirement map, schemas, changelog)
//                                    -> packages/conformance/spec/v1/
//   fixtures/ (v1 cases, frozen gold list, manifest, fixture schema, README)
//                                    -> packages/conformance/fixtures/
// Incremental: a file is written only when its bytes differ, and a copy whose source is gone is removed.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const quiet = process.argv.includes('--quiet');
let written = 0;

function copyFile(from, to) {
  const bytes = readFileSync(from);
  if (existsSync(to) && readFileSync(to).equals(bytes)) return;
  mkdirSync(dirname(to), { recursive: true });
  writeFileSync(to, bytes);
  written++;
}

/** Makes `to` hold exactly the files of `from` that `keep` accepts (relative paths with `/`). */
function syncDirectory(from, to, keep = () => true) {
  const wanted = new Set();
  const visit = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      const rel = relative(from, path).split('\\').join('/');
      if (entry.isDirectory()) visit(path);
      else if (entry.isFile() && keep(rel)) {
        wanted.add(rel);
        copyFile(path, join(to, rel));
      }
    }
  };
  visit(from);
  const prune = (dir) => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      const rel = relative(to, path).split('\\').join('/');
      if (entry.isDirectory()) {
        prune(path);
        if (readdirSync(path).length === 0) rmSync(path, { recursive: true });
      } else if (!wanted.has(rel)) {
        rmSync(path);
        written++;
      }
    }
  };
  prune(to);
}

const packagesDir = join(root, 'packages');
for (const name of readdirSync(packagesDir)) {
  const dir = join(packagesDir, name);
  if (statSync(dir).isDirectory() && existsSync(join(dir, 'package.json')))
    copyFile(join(root, 'LICENSE'), join(dir, 'LICENSE'));
}

// Only the JSON Schema documents: everything else of spec/v1 is the kit's business.
const isSchema = (rel) => !rel.includes('/') && rel.endsWith('schema.json');
for (const file of readdirSync(join(root, 'spec/v1')).filter(isSchema))
  copyFile(join(root, 'spec/v1', file), join(packagesDir, 'schema/dist/v1', file));

syncDirectory(
  join(root, 'spec/v1'),
  join(packagesDir, 'conformance/spec/v1'),
  (rel) => rel !== 'requirements-manual.json',
);
syncDirectory(join(root, 'fixtures'), join(packagesDir, 'conformance/fixtures'));

if (!quiet && written > 0) console.log(`package-assets: ${written} file(s) updated`);
