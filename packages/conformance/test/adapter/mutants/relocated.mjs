// The reference file adapter with every journal moved away from the path the harness names (feature `store-lines`,
// adapter.md §5.8): `<root>/.relocated/<location>` holds what a path `<root>/<location>` names, for `open`, the
// lifecycle and retention ops and `lines` alike. A check that read or planted the named path would find nothing there
// and fail, so this adapter passing the checks that run through `lines` shows that they do (TJ-CONF-053). It claims the
// writer level and features lifecycle and retention beside store-lines; its lifecycle and compaction are the
// reference's, on the relocated files.
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { referenceImplementation } from '@turnjournal/conformance';
import { safeParseStorePath, storePathSegments } from '@turnjournal/reader/store-format';

const PRIVATE = '.relocated';
const reference = referenceImplementation;

/** Where a harness path's journal lives: under `.relocated` of the root its layout location says (spec §4.4). */
function relocated(file) {
  const segments = file.split('/');
  const location = safeParseStorePath(segments);
  if (location === undefined) return file;
  const relative = storePathSegments(location);
  const moved = join(segments.slice(0, -relative.length).join('/') || '/', PRIVATE, ...relative);
  mkdirSync(dirname(moved), { recursive: true });
  return moved;
}

/** The store root a harness root names. */
const relocatedRoot = (root) => join(root, PRIVATE);

/** The committed lines of a file: every byte before its last LF, split at LF. */
function committedLines(file) {
  let bytes;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    if (error.code === 'ENOENT') return [];
    throw error;
  }
  const end = bytes.lastIndexOf(0x0a) + 1;
  const lines = [];
  for (let start = 0; start < end; ) {
    const lf = bytes.indexOf(0x0a, start);
    lines.push(bytes.subarray(start, lf));
    start = lf + 1;
  }
  return lines;
}

/** The relocated reference: writer level, families turn and event, features store-lines, lifecycle and retention. */
export const relocatedImplementation = {
  capabilities: {
    ...reference.capabilities,
    name: 'relocated',
    levels: ['writer'],
    families: ['turn', 'event'],
    features: ['store-lines', 'lifecycle', 'retention'],
  },
  open: (file, durability) => reference.open(relocated(file), durability),
  lines: async (file) => committedLines(relocated(file)),
  lifecycle: {
    ...reference.lifecycle,
    turnSubmit: (request) => reference.lifecycle.turnSubmit({ ...request, root: relocatedRoot(request.root) }),
    turnEvent: (request) => reference.lifecycle.turnEvent({ ...request, root: relocatedRoot(request.root) }),
    eventAppend: (request) => reference.lifecycle.eventAppend({ ...request, file: relocated(request.file) }),
  },
  retention: {
    sweep: (request) => reference.retention.sweep({ ...request, root: relocatedRoot(request.root) }),
    compact: (request) => reference.retention.compact({ ...request, file: relocated(request.file) }),
  },
};
