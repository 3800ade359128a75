import { type Dirent, lstatSync, readdirSync, type Stats, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { type Finding, makeFinding } from '@turnjournal/schema';
import type { LayoutHint, StoreDiscovery, StoreFile } from '../store/store-listing.js';
import { explainInvalidIdentifier, isValidIdentifier } from '../store-format/identifiers.js';
import { safeParseStorePath } from '../store-format/layout.js';
import { describeSpecial } from './open-regular.js';

/** Names of files writers leave beside journals (spec §4.5); discovery skips them silently (TJ-FAM-020). */
export function isReservedFileName(name: string): boolean {
  return (
    name.endsWith('.lock') ||
    name.endsWith('.lock.takeover') ||
    name.endsWith('.jsonl.durable') ||
    /^\..+\.tmp$/.test(name) ||
    /\.\d+\.torn$/.test(name)
  );
}

/** Upper bound on directory depth, so a symlink loop or a hostile tree cannot make discovery run away. */
const MAX_DEPTH = 32;

/**
 * Finds every journal and state file under the given paths, which may be single files, a `_turn_journal` directory,
 * a session directory or a whole store root. Never throws for what it finds on disk: bad names and unreadable paths
 * become findings. A path given is followed when it is a symbolic link (the caller named it); links found inside a
 * directory are not, so a link cannot lead discovery outside the store or into a loop (TJ-FAM-025). A link, FIFO,
 * socket or device with a journal's or state document's name, or given explicitly, is reported as `special_file` and
 * never read (TJ-FAM-024).
 */
export function discoverStore(paths: readonly string[]): StoreDiscovery {
  const files: StoreFile[] = [];
  const findings: Finding[] = [];
  // A directory's entries come with their type (d_type, or an lstat by Node where the file system has none), so only
  // the paths given are stat'ed: a store of many journals costs one system call less per file.
  const visit = (path: string, depth: number, explicit: boolean, entry?: Dirent) => {
    let stat: Stats | Dirent;
    try {
      stat = entry ?? statSync(path);
    } catch (error) {
      findings.push(
        makeFinding('incomplete_read', `cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`, {
          file: path,
        }),
      );
      return;
    }
    if (stat.isDirectory()) {
      if (depth >= MAX_DEPTH) {
        findings.push(
          makeFinding('incomplete_read', `directory nesting deeper than ${MAX_DEPTH} levels is not scanned`, {
            file: path,
          }),
        );
        return;
      }
      let entries: Dirent[];
      try {
        entries = readdirSync(path, { withFileTypes: true }).sort((a, b) =>
          a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
        );
      } catch (error) {
        findings.push(
          makeFinding('incomplete_read', `cannot list ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`, {
            file: path,
          }),
        );
        return;
      }
      for (const entry of entries) {
        const child = join(path, entry.name);
        if (entry.name.includes(REPLACEMENT) && wouldRead(entry) && unnameable(child)) {
          findings.push(unnameableFinding(child, entry.isDirectory()));
          continue;
        }
        visit(child, depth + 1, false, entry);
      }
      return;
    }
    const name = basename(path);
    if (isReservedFileName(name)) return;
    const format = name.endsWith('.jsonl') ? 'jsonl' : name.endsWith('.json') ? 'json' : undefined;
    if (!stat.isFile()) {
      // Anything else named like a journal could hang a read (a FIFO), never end it (a device) or lead out of the
      // store (a link): it is reported, not opened. Other names are not the store's business, as for regular files.
      if (explicit || format !== undefined) {
        const what = describeSpecial(stat);
        const why = stat.isSymbolicLink() ? 'links inside a store are not followed' : 'it is never opened for reading';
        findings.push(makeFinding('special_file', `${what}, not a regular file: ${why}`, { file: path }));
      }
      return;
    }
    if (format === undefined) {
      if (explicit) files.push({ path, format: 'jsonl', hint: { family: undefined } });
      return;
    }
    const hint = layoutHint(path, format, findings);
    if (format === 'json' && hint.family !== 'state' && !explicit) {
      findings.push(
        makeFinding('unrecognised_file', 'a .json file outside a state directory is not a journal; skipped', {
          file: path,
        }),
      );
      return;
    }
    files.push({ path, format, hint });
  };
  for (const path of paths) visit(path, 0, true);
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { files, findings };
}

// What a listing puts in a name for bytes that are not UTF-8.
const REPLACEMENT = '\uFFFD';

/**
 * True when a listed path names nothing: its name was not valid UTF-8, and the string the listing gave (with U+FFFD
 * for the bad bytes) is another name. A name that holds U+FFFD itself is found. Asked only of names with U+FFFD.
 */
function unnameable(path: string): boolean {
  return lstatSync(path, { throwIfNoEntry: false }) === undefined;
}

/**
 * True for what a scan reads or descends into: a directory, or a file with a journal's or state document's name that
 * is not reserved. Other files are not the store's business (TJ-FAM-020), whatever their name.
 */
function wouldRead(entry: Dirent): boolean {
  if (entry.isDirectory()) return true;
  const { name } = entry;
  return (name.endsWith('.jsonl') || name.endsWith('.json')) && !isReservedFileName(name);
}

/** `incomplete_read` for an entry that cannot be reached by name (TJ-AUDIT-015): it is there, but never read. */
function unnameableFinding(path: string, directory: boolean): Finding {
  const message = directory
    ? 'the directory name is not valid UTF-8, so it cannot be listed by name: nothing under it was read (rename it)'
    : 'the file name is not valid UTF-8, so it cannot be opened by name: nothing in it was read (rename it)';
  return makeFinding('incomplete_read', message, { file: path });
}

/** The layout hint of one file, reporting ids in its name that are not valid identifiers (TJ-FAM-012, TJ-FAM-013). */
function layoutHint(path: string, format: 'jsonl' | 'json', findings: Finding[]): LayoutHint {
  const checked = (id: string, code: 'invalid_session_id' | 'invalid_run_id'): string | undefined => {
    if (isValidIdentifier(id)) return id;
    findings.push(
      makeFinding(code, `${explainInvalidIdentifier(id)}; the file is read, but the id is never used to build a path`, {
        file: path,
      }),
    );
    return undefined;
  };
  const location = safeParseStorePath(path.split(/[\\/]/));
  if (location === undefined || (format === 'json') !== (location.family === 'state')) return { family: undefined };
  switch (location.family) {
    case 'state':
      return { family: 'state', sessionId: checked(location.sessionId, 'invalid_session_id') ?? location.sessionId };
    case 'turn': {
      const { sessionId, shard } = location;
      if (shard !== undefined && !isValidIdentifier(shard)) {
        findings.push(
          makeFinding('unrecognised_file', `shard name: ${explainInvalidIdentifier(shard)}`, { file: path }),
        );
      }
      return { family: 'turn', sessionId: checked(sessionId, 'invalid_session_id') ?? sessionId, shard };
    }
    case 'event':
      return { family: 'event', sessionId: isValidIdentifier(location.sessionId) ? location.sessionId : undefined };
    case 'run':
      return { family: 'run', runId: checked(location.runId, 'invalid_run_id') ?? location.runId };
  }
}
