import { AdapterFailure, AdapterProcess } from '../../process.js';
import type { StartResult } from '../../protocol.js';
import type { CheckRecorder } from '../record.js';

/** What the writer checks record through: a {@link CheckRecorder}, or one that skips what an adapter's store cannot show. */
export type WriterRecorder = Pick<CheckRecorder, 'record' | 'selected'>;

/** What every writer-tier check needs: the claim, the run settings and a way to start fresh adapter processes. */
export interface WriterContext {
  readonly claims: StartResult;
  /** The adapter command. */
  readonly adapter: string;
  /** Claimed durability modes with an acknowledgement promise (`every`, `group`), in claim order. */
  readonly modes: readonly ('every' | 'group')[];
  /** Kill rounds. */
  readonly rounds: number;
  readonly seed: number;
  readonly timeoutMs: number;
  /** The factor the run's time limits are multiplied by: a check's own hang guard is multiplied by it too (TJ-CONF-044). */
  readonly timeoutScale: number;
  /** `never`: strace-based checks are skipped on request. */
  readonly strace: 'auto' | 'never';
  readonly recorder: WriterRecorder;
  /**
   * The adapter claims feature `store-lines`: it keeps journals in a record store, not at the paths named, and the
   * harness reads back what a journal holds through `lines` (adapter.md §5.8).
   */
  readonly storeLines: boolean;
}

/** A new adapter process (not yet started). */
export function spawnAdapter(context: WriterContext, wrapper?: readonly string[]): AdapterProcess {
  return AdapterProcess.spawn(context.adapter, {
    timeoutMs: context.timeoutMs,
    ...(wrapper === undefined ? {} : { wrapper }),
  });
}

/** Sends `start` and returns the process. */
export async function started(process: AdapterProcess): Promise<AdapterProcess> {
  await process.request('start', { protocol: 1 });
  return process;
}

/** Opens `file` on `process` and returns the handle. */
export async function openHandle(process: AdapterProcess, file: string, durability: string): Promise<string> {
  return ((await process.request('open', { file, durability })) as { handle: string }).handle;
}

/**
 * The error code `request` was answered with, `ok` when it succeeded; throws what is not an error response (an exit,
 * a timeout, a protocol violation), which fails the check.
 */
export async function answerCode(request: Promise<unknown>): Promise<string> {
  try {
    await request;
    return 'ok';
  } catch (error) {
    if (error instanceof AdapterFailure && error.kind === 'error_response') return error.code ?? 'error';
    throw error;
  }
}

/** Runs `body` with `count` started adapter processes and disposes of them, however `body` ends. */
export async function withAdapters<T>(
  context: WriterContext,
  count: number,
  body: (processes: AdapterProcess[]) => Promise<T>,
): Promise<T> {
  const processes = Array.from({ length: count }, () => spawnAdapter(context));
  try {
    await Promise.all(processes.map((p) => started(p)));
    return await body(processes);
  } finally {
    await Promise.all(processes.map((p) => p.dispose()));
  }
}

/** {@link withAdapters} with one process. */
export function withAdapter<T>(context: WriterContext, body: (process: AdapterProcess) => Promise<T>): Promise<T> {
  return withAdapters(context, 1, (processes) => body(processes[0] as AdapterProcess));
}
