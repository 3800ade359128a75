import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What a directory tree holds, by path relative to its root: a regular file's bytes (as latin1, one char per byte), a
 * link's target, or the kind of any other entry. Special files are never opened: a FIFO would block the read.
 */
export function snapshotTree(root: string): Map<string, string> {
  const entries = new Map<string, string>();
  const walk = (relative: string) => {
    for (const name of readdirSync(join(root, relative)).sort()) {
      const path = relative === '' ? name : join(relative, name);
      const stats = lstatSync(join(root, path));
      if (stats.isDirectory()) {
        entries.set(`${path}/`, 'directory');
        walk(path);
      } else if (stats.isFile()) entries.set(path, `file ${readFileSync(join(root, path), 'latin1')}`);
      else if (stats.isSymbolicLink()) entries.set(path, `link ${readlinkSync(join(root, path))}`);
      else entries.set(path, 'special');
    }
  };
  walk('');
  return entries;
}

/** One line per entry that differs between two snapshots of one tree: created, removed or changed. */
export function treeChanges(before: Map<string, string>, after: Map<string, string>): string[] {
  const changes: string[] = [];
  for (const [path, was] of before) {
    const now = after.get(path);
    if (now === undefined) changes.push(`${path} was removed`);
    else if (now !== was) changes.push(`${path} changed (${describe(was)} → ${describe(now)})`);
  }
  for (const path of after.keys()) if (!before.has(path)) changes.push(`${path} was created`);
  return changes;
}

function describe(entry: string): string {
  return entry.startsWith('file ') ? `${entry.length - 'file '.length} bytes` : entry;
}
