import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StoreFixtureCase } from '../../fixtures/fixture-file.js';
import {
  compareStoreObservation,
  referenceStoreReader,
  type StoreObservation,
  writeStoreFixture,
} from '../../fixtures/run-store-fixtures.js';
import { truncate } from '../process.js';
import { adapterReading } from './adapter-reading.js';
import { freshDir } from './fresh-dir.js';
import type { Outcome } from './record.js';
import type { Session } from './session.js';

// A generated case: files the adapter reads and the reference reads too, compared as a store fixture case compares
// them. A failing case is shrunk line by line and saved as a store fixture case that replays it (TJ-CONF-010).

/** A store's files, paths relative to its root. */
export type StoreFiles = readonly { readonly path: string; readonly text: string }[];

/** What a generated case asks besides the read: its line-size limit and the replay cursors of its event logs. */
export interface GeneratedCaseOptions {
  /** `max_line_bytes` of the read (TJ-CONF-031); the default limit when absent. */
  readonly maxLineBytes?: number;
  /** Ask the event logs' replay (feature `replay`) from these cursors, relative to each log's first and last seq. */
  readonly replay?: boolean;
}

/** The seqs of the lines of `text` that parse as objects with an integer `seq`, in file order. */
function seqsOf(text: string): number[] {
  const seqs: number[] = [];
  for (const line of text.split('\n')) {
    try {
      const value = JSON.parse(line) as { seq?: unknown };
      if (typeof value?.seq === 'number' && Number.isSafeInteger(value.seq)) seqs.push(value.seq);
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
    }
  }
  return seqs;
}

/**
 * Replay cursors of every event log: from the start (-1), two and one before the first seq (a compacted log: `compacted`
 * for the first, every record for the second), at the first seq, in the middle, at the last seq and beyond it (`ahead`).
 */
function replayQueries(files: StoreFiles): NonNullable<StoreFixtureCase['expect']['replay']> {
  const queries: { file: string; after: number }[] = [];
  for (const file of files) {
    if (!file.path.endsWith('events.jsonl')) continue;
    const seqs = seqsOf(file.text);
    if (seqs.length === 0) continue;
    const first = seqs[0] as number;
    const last = Math.max(...seqs);
    const middle = seqs[Math.floor(seqs.length / 2)] as number;
    for (const after of new Set([-1, first - 2, first - 1, first, middle, last, last + 1]))
      if (after >= -1) queries.push({ file: file.path, after });
  }
  return queries;
}

/**
 * The case the reference reader makes of `files`: turns, findings, runs and event logs as it reads them (an event log
 * as its whole-file fold, which a `read` answers: TJ-REPLAY-001; recovery from the last checkpoint is bound to agree
 * only for a log without seq findings, TJ-REPLAY-007), and its replay answers.
 */
export async function referenceCase(
  files: StoreFiles,
  description: string,
  requirements: readonly string[],
  options: GeneratedCaseOptions = {},
): Promise<StoreFixtureCase> {
  const root = freshDir('tj-conf-gen-');
  try {
    writeStoreFixture(root, { files: [...files] });
    const limit = options.maxLineBytes === undefined ? {} : { max_line_bytes: options.maxLineBytes };
    const replay = options.replay === true ? replayQueries(files) : [];
    const observed = await referenceStoreReader(root, {
      description,
      requirements: [...requirements],
      files: [...files],
      ...limit,
      expect: { replay },
    });
    return {
      description,
      requirements: [...requirements],
      files: [...files],
      ...limit,
      expect: {
        turns: observed.turns as Record<string, Record<string, string>>,
        findings: observed.findings.map((f) =>
          Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined)),
        ) as NonNullable<StoreFixtureCase['expect']['findings']>,
        runs: observed.runs as Record<string, string>,
        event_logs: Object.fromEntries(
          Object.entries(observed.event_logs).map(([file, state]) => [file, 'fold' in state ? state.fold : state]),
        ) as NonNullable<StoreFixtureCase['expect']['event_logs']>,
        ...(replay.length === 0
          ? {}
          : { replay: observed.replay as NonNullable<StoreFixtureCase['expect']['replay']> }),
      },
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** The differences between the adapter's answers on `files` and the reference's. */
export async function compareWithReference(
  session: Session,
  files: StoreFiles,
  requirements: readonly string[],
  options: GeneratedCaseOptions = {},
): Promise<string[]> {
  const expected = await referenceCase(files, 'generated', requirements, options);
  const root = freshDir('tj-conf-gen-');
  try {
    writeStoreFixture(root, { files: [...files] });
    const process = await session.get();
    const reading = await adapterReading(process, root, 'tolerant', false, options.maxLineBytes);
    const replay: StoreObservation['replay'][number][] = [];
    for (const { file, after } of expected.expect.replay ?? []) {
      const answer = await process.request('replay', { file: join(root, file), after });
      replay.push({ file, after, ...answer });
    }
    return compareStoreObservation(expected, { ...reading, replay });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/**
 * Drops lines while the adapter still disagrees with the reference: blocks of half a file's lines first, then
 * quarters, down to single lines, so that a store of thousands of tiny records shrinks within the budget of attempts.
 */
async function shrink(
  session: Session,
  files: StoreFiles,
  requirements: readonly string[],
  options: GeneratedCaseOptions,
): Promise<StoreFiles> {
  let current = files.filter((f) => f.text !== '');
  let budget = 150;
  const stillFails = async (candidate: StoreFiles) => {
    budget--;
    // A failure of the adapter on the candidate keeps it as failing too: the shrink is after any failure.
    const failures = await compareWithReference(session, candidate, requirements, options).catch((error: unknown) => [
      `adapter failure: ${error instanceof Error ? error.message : String(error)}`,
    ]);
    return failures.length > 0;
  };
  for (let f = 0; f < current.length && budget > 0; f++) {
    const path = (current[f] as StoreFiles[number]).path;
    let lines = (current[f] as StoreFiles[number]).text.split(/(?<=\n)/);
    for (let block = Math.ceil(lines.length / 2); block >= 1 && budget > 0; block = Math.floor(block / 2)) {
      for (let start = 0; start < lines.length && budget > 0; ) {
        const kept = [...lines.slice(0, start), ...lines.slice(start + block)];
        const text = kept.join('');
        const candidate =
          text === '' ? current.filter((_, i) => i !== f) : current.map((file, i) => (i === f ? { path, text } : file));
        if (candidate.length > 0 && (await stillFails(candidate))) {
          lines = kept;
          current = candidate;
          // The file is gone: the next one now has its index.
          if (text === '') {
            f -= 1;
            block = 0;
            break;
          }
        } else start += block;
      }
    }
  }
  return current;
}

/** One generated case as a check body: compare, and on a difference shrink, save the counterexample and say where. */
export async function generatedCaseOutcome(
  session: Session,
  generated: { readonly files: StoreFiles; readonly perturbations: readonly string[] },
  requirements: readonly string[],
  replayLabel: { readonly caseSeed: number; readonly seed: number; readonly name: string },
  options: GeneratedCaseOptions = {},
): Promise<Outcome> {
  const failures = await compareWithReference(session, generated.files, requirements, options);
  if (failures.length === 0) return { failures: [] };
  const { caseSeed, seed, name } = replayLabel;
  const shrunk = await shrink(session, generated.files, requirements, options);
  const counterexample = await referenceCase(shrunk, `${name}, seed ${caseSeed}`, requirements, options);
  // A fresh directory per failure: two runs with one seed (CI jobs in parallel) never overwrite each other.
  const path = join(mkdtempSync(join(tmpdir(), `tj-conformance-counterexample-${caseSeed}-`)), 'counterexample.json');
  writeFileSync(path, `${JSON.stringify(counterexample, null, 2)}\n`);
  return {
    failures: [
      ...failures.map((failure) => truncate(failure, 2000)),
      `perturbations: ${generated.perturbations.join(', ') || 'none'}`,
      `seed ${caseSeed} (run seed ${seed}, ${name}); shrunk counterexample written to ${path}:`,
      truncate(JSON.stringify(shrunk), 2000),
      `after shrinking: ${(await compareWithReference(session, shrunk, requirements, options)).map((f) => truncate(f, 1000)).join('; ')}`,
    ],
  };
}
