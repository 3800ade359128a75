import { readFileSync } from 'node:fs';
import type { AdapterProcess } from '../../process.js';
import type { StartResult } from '../../protocol.js';
import type { Outcome } from '../record.js';
import { spawnAdapter, started, type WriterContext, type WriterRecorder } from './context.js';
import { claimsFeature, type Feature, survivors, withoutSpace } from './support.js';

// Feature `store-lines` (adapter.md §5.8): a writer that keeps journals in a record store, not at the paths the harness
// names. The harness then reads back what a journal holds through the op `lines`, never from the path, and the checks
// about files on a disk are not applicable (reported so, never passed).

/**
 * Checks whose oracle is the records a journal holds: with `store-lines` they read back through `lines`, and plant
 * their starting logs through `open` and `append` (the same bytes, TJ-CONF-027). Every other writer check is reported
 * as skipped, for one of the reasons below.
 */
export const THROUGH_LINES: ReadonlySet<string> = new Set([
  'writer/claims',
  'writer/ack-oracle',
  'writer/restart',
  'writer/lock',
  'writer/race',
  'writer/byte-exact',
  'writer/escape-separators',
  'writer/invalid-record',
  'writer/line-too-long',
  'writer/histories',
  // Feature lifecycle: what the writer decides, read back through `lines`.
  'writer/turn-submit-idempotent',
  'writer/turn-transitions',
  'writer/event-runs',
  'writer/event-checkpoints',
  'writer/event-run-index',
  'writer/event-compacted-start',
  'writer/event-epoch',
  'writer/event-split-checkpoint',
  // Feature retention: compaction of logs the harness planted through the adapter.
  'writer/compact',
  'writer/compact-split-checkpoint',
]);

/**
 * Checks of a claimed feature that still read or plant files, with why: reported as not proven, which keeps a
 * store-lines run from being CONFORMANT until they can run through the protocol.
 */
const NOT_THROUGH_LINES: Readonly<Record<string, string>> = {
  'writer/turn-submit-invalid-session':
    'it checks that a refused submission created nothing by listing the store directory, and `lines` answers only for a journal a path names',
  'writer/run-steps':
    'a run file (`sessions/YYYY/MM/DD/<run_id>.jsonl`) is no journal location `lines` names (adapter.md §5.8)',
  'writer/recover':
    "its store holds a torn tail, a journal whose lock file a live writer holds and a run file, which the protocol's `append` cannot plant in a record store",
  'writer/sweep':
    "its store holds a line that is not JSON, records in non-canonical bytes, a live writer's lock file and another sweep's directory lock, which the protocol's `append` cannot plant in a record store",
};

/** Checks about files on a disk: what a record store has no counterpart of. */
const FILE_ONLY: Readonly<Record<string, string>> = {
  'writer/torn-tail': 'a torn tail is bytes after the last LF of a file',
  'writer/preallocated-space': 'pre-allocated space is NUL bytes at the end of a file',
  'writer/quarantine': 'the quarantine copy is a file beside the journal',
  'writer/mid-file-damage': 'the harness writes damaged bytes into the file before the writer opens it',
  'writer/foreign-host-lock': 'the lock is a file the harness plants beside the journal',
  'writer/dead-holder-lock': 'the lock is a file the harness plants beside the journal',
  'writer/zombie-holder-lock': 'the lock is a file the harness plants beside the journal',
  'writer/foreign-namespace-lock': 'the lock is a file the harness plants beside the journal',
  'writer/expired-lease-lock': 'the lock is a file the harness plants beside the journal',
  'writer/fenced': 'the harness fences the writer by replacing its lock file',
  'writer/lock-replaced': 'the harness replaces the lock file',
  'writer/symlink': 'the journal path is a symbolic link',
  'writer/fifo': 'the journal path is a FIFO',
  'writer/fsync-before-ack': 'strace follows the writes and syncs of the journal file',
  'writer/durable-open': 'strace follows the syncs of the file, its directory and its lock file',
  'writer/none-close': 'strace follows the syncs of the journal file',
  'writer/fault-fdatasync-eio': 'strace injects faults into the system calls on the journal file',
  'writer/fault-fdatasync-once': 'strace injects faults into the system calls on the journal file',
  'writer/fault-write-eio': 'strace injects faults into the system calls on the journal file',
  'writer/fault-write-enospc': 'strace injects faults into the system calls on the journal file',
  'writer/short-write': 'a file-size limit cuts a write to the journal file',
  'writer/durable-directories': 'strace follows the syncs of the directories the writer creates',
  'writer/recover-durable': 'strace follows the syncs of the journal file',
  'writer/sweep-rewrite': 'strace follows the temporary file, its rename and the directory sync',
  'writer/sweep-recheck': 'strace holds the sweep on the journal lock file',
  'writer/state-replace': 'strace follows the temporary file and its rename',
  'writer/live-durable': 'strace follows the writes and syncs of the event log file',
  'writer/turn-unreadable-shard': "the session's other shard is a symbolic link the harness plants beside the journal",
  'writer/event-seq': "the harness appends a torn tail to the log's file between two writers",
};

/** The family a writer check needs beyond the turn or event family of every writer check. */
const FAMILY_OF: Readonly<Record<string, 'run' | 'state'>> = {
  'writer/run-steps': 'run',
  'writer/state-replace': 'state',
};

/** The feature a writer check needs, by its id: a check of a feature the adapter does not claim is skipped as such. */
export function featureOf(id: string): Feature | undefined {
  if (id.startsWith('writer/live-')) return 'live';
  if (id.startsWith('writer/recover')) return 'recovery';
  if (id.startsWith('writer/sweep') || id.startsWith('writer/compact')) return 'retention';
  if (
    id.startsWith('writer/turn-') ||
    id.startsWith('writer/event-') ||
    id === 'writer/run-steps' ||
    id === 'writer/state-replace' ||
    id === 'writer/durable-directories'
  )
    return 'lifecycle';
  return undefined;
}

/**
 * The outcome a check gets when the adapter claims `store-lines` and the check cannot run through `lines`: not
 * applicable for a check about files, not proven for a check of a feature that still reads the files it names.
 */
function storeLinesOutcome(claims: StartResult, id: string): Outcome {
  const feature = featureOf(id);
  if (feature !== undefined && !claimsFeature(claims, feature)) return { skip: `feature ${feature} is not claimed` };
  const family = FAMILY_OF[id];
  if (family !== undefined && !claims.families.includes(family)) return { skip: `family ${family} not claimed` };
  const fileOnly = FILE_ONLY[id];
  if (fileOnly !== undefined)
    return { skip: `not applicable to a store that is not files (feature store-lines): ${fileOnly}` };
  const why =
    NOT_THROUGH_LINES[id] ?? 'it reads the files at the paths it names, and does not read back through `lines` yet';
  return { skip: `not proven for a store that is not files (feature store-lines): ${why}`, unproven: true };
}

/**
 * The recorder the writer checks of an adapter claiming `store-lines` record through: a check that reads back through
 * `lines` runs; any other is recorded as skipped, with the reason (TJ-CONF-053), its body never run.
 */
export function storeLinesRecorder(recorder: WriterRecorder, claims: StartResult): WriterRecorder {
  return {
    selected: (id) => recorder.selected(id),
    record: (id, title, tier, requirements, body) =>
      recorder.record(
        id,
        title,
        tier,
        requirements,
        THROUGH_LINES.has(id) ? body : () => Promise.resolve(storeLinesOutcome(claims, id)),
      ),
  };
}

/**
 * The lines of a `lines` result (adapter.md §5.8), each the exact bytes its base64 stands for, without its LF. The
 * result was validated against the protocol schema when it arrived (TJ-CONF-028).
 */
export function linesOf(result: unknown): Buffer[] {
  return (result as { lines: string[] }).lines.map((line) => Buffer.from(line, 'base64'));
}

/**
 * What the journal `file` holds, as bytes: with `store-lines`, the committed lines `lines` answers, each with its LF
 * (asked of `process`, or of a fresh adapter process: reading takes no lock); otherwise the file's bytes without the
 * pre-allocated space at their end (a torn tail included). Empty for a journal that does not exist.
 */
export async function heldBytes(context: WriterContext, file: string, process?: AdapterProcess): Promise<Buffer> {
  if (!context.storeLines) {
    try {
      return withoutSpace(readFileSync(file));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      return Buffer.alloc(0);
    }
  }
  const ask = async (adapter: AdapterProcess) =>
    Buffer.concat(linesOf(await adapter.request('lines', { file })).flatMap((line) => [line, Buffer.from('\n')]));
  if (process !== undefined) return ask(process);
  const reader = spawnAdapter(context);
  try {
    return await ask(await started(reader));
  } finally {
    await reader.dispose();
  }
}

/**
 * The `x_tj_seq` of the records the journal `file` holds, in order, and what is wrong with its lines: through `lines`
 * with `store-lines` (every line must be a JSON record), from the file otherwise (the reader's findings, a torn tail).
 */
export async function heldSurvivors(
  context: WriterContext,
  file: string,
  process?: AdapterProcess,
): Promise<{ seqs: number[]; findings: string[]; torn: boolean }> {
  if (!context.storeLines) return survivors(file);
  const seqs: number[] = [];
  const findings: string[] = [];
  const text = (await heldBytes(context, file, process)).toString('latin1');
  for (const [index, line] of text.split('\n').slice(0, -1).entries()) {
    let value: unknown;
    try {
      value = JSON.parse(Buffer.from(line, 'latin1').toString('utf8'));
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      findings.push(`malformed_line at line ${index + 1}`);
      continue;
    }
    const seq = (value as { x_tj_seq?: unknown } | null)?.x_tj_seq;
    if (typeof seq === 'number') seqs.push(seq);
  }
  return { seqs, findings, torn: false };
}
