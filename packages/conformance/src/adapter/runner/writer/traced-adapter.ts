import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { AdapterProcess } from '../../process.js';
import { straceAvailable, straceWrapper } from '../../strace.js';
import { freshDir } from '../fresh-dir.js';
import { spawnAdapter, started, type WriterContext } from './context.js';
import { STRACE_MISSING } from './support.js';

/** What a strace-based check's body gets: a started adapter under strace, a fresh directory, and the trace so far. */
export interface TracedRun {
  readonly process: AdapterProcess;
  /** A fresh directory, removed afterwards; the trace file lives in it too. */
  readonly dir: string;
  /** The trace written so far (stop the adapter first to read all of it). */
  readonly trace: () => string;
}

/** A check's outcome: its failures, or a skip that leaves a durability claim not proven. */
export type TracedOutcome = { failures: string[] } | { skip: string; unproven: true };

/**
 * Runs `body` with a started adapter traced by strace, and disposes of both however `body` ends. Without strace (or
 * when the run asked for none) the check is skipped as not proven: it never passes unseen.
 */
export async function withTracedAdapter(
  context: WriterContext,
  body: (run: TracedRun) => Promise<string[]>,
): Promise<TracedOutcome> {
  if (context.strace === 'never') return { skip: 'disabled: not proven', unproven: true };
  if (!straceAvailable()) return { skip: STRACE_MISSING, unproven: true };
  const dir = freshDir('tj-conf-traced-');
  const traceFile = join(dir, 'trace.txt');
  const process = spawnAdapter(context, straceWrapper(traceFile));
  try {
    await started(process);
    return { failures: await body({ process, dir, trace: () => readFileSync(traceFile, 'utf8') }) };
  } finally {
    await process.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}
