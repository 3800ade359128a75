// One way to reach storage (issue 35, spec §19): the product's packages reach a disk only through the file binding —
// the reader's `src/file/` (discovery, lock files, reads by path and descriptor) and the writer's `src/fs/` (the
// file-system layer every file-store write goes through). Everything else goes through the record-store seam or the
// codec, and imports no file system: this test names any module that does.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../../../..', import.meta.url));
/** The packages users build on (the conformance kit and the test support are the file binding's tooling). */
const PRODUCT = ['schema', 'reader', 'writer', 'live', 'client', 'ai-sdk', 'postgres'];
const FILE_BINDING = ['packages/reader/src/file/', 'packages/writer/src/fs/'];
/** A value import of a file-system module (`import type` brings no code, and is allowed). */
const FILE_SYSTEM_IMPORT =
  /^\s*import\s+(?!type\b)[^;]*?from\s+['"](node:)?fs(\/promises)?['"]|\brequire\(\s*['"](node:)?fs|\bimport\(\s*['"](node:)?fs/m;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return /\.(ts|mts|js|mjs)$/.test(entry.name) ? [path] : [];
  });
}

describe('the file binding is the one way to the disk (issue 35)', () => {
  it('no product module outside the file binding imports a file system', () => {
    const importers = PRODUCT.flatMap((name) => sources(join(repo, 'packages', name, 'src')))
      .filter((file) => FILE_SYSTEM_IMPORT.test(readFileSync(file, 'utf8')))
      .map((file) => relative(repo, file));
    expect(importers.length, 'the scan found the file binding itself').toBeGreaterThan(3);
    expect(importers.filter((file) => !FILE_BINDING.some((dir) => file.startsWith(dir)))).toEqual([]);
  });

  it('the pattern tells a value import from a type import', () => {
    expect(FILE_SYSTEM_IMPORT.test("import { readFileSync } from 'node:fs';")).toBe(true);
    expect(FILE_SYSTEM_IMPORT.test("import {\n  open,\n} from 'node:fs/promises';")).toBe(true);
    expect(FILE_SYSTEM_IMPORT.test("import type { FileHandle } from 'node:fs/promises';")).toBe(false);
    expect(FILE_SYSTEM_IMPORT.test("const fs = require('fs');")).toBe(true);
    expect(FILE_SYSTEM_IMPORT.test("import { join } from 'node:path';")).toBe(false);
  });
});
