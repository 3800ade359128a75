import { parseStrace } from '../../strace.js';

// The strace-based checks of open and close: internal to the runner (not exported from the package).
/** One step of a traced adapter that the durability checks look at, in the order it took effect. */
export interface TraceStep {
  readonly kind: 'open' | 'write' | 'sync' | 'respond';
  /** The path the descriptor was opened on (`open`, `write`, `sync`), as it appears in the trace. */
  readonly path?: string;
  /** The request ids a response write carries (`respond`). */
  readonly ids?: readonly number[];
  /** The arguments of a `write` as strace printed them: the bytes written, escaped (`write`). */
  readonly data?: string;
  /** Position in the trace (line index where the step took effect). */
  readonly at: number;
}

/**
 * The steps of a trace (see {@link straceWrapper}): successful opens, writes and syncs by path, and response writes to
 * fd 1 by request id. A response counts from when its write started; everything else from when it returned.
 */
export function traceSteps(trace: string): TraceStep[] {
  const calls = parseStrace(trace).map((c) => ({
    ...c,
    at: c.name === 'write' && fdOf(c.args) === 1 ? c.start : c.end,
  }));
  calls.sort((a, b) => a.at - b.at);
  const fds = new Map<number, string>();
  const steps: TraceStep[] = [];
  for (const call of calls) {
    const fd = fdOf(call.args);
    if (call.name === 'openat') {
      const path = /^[^,]+,\s*"((?:[^"\\]|\\.)*)"/.exec(call.args)?.[1];
      if (call.ret !== null && call.ret >= 0 && path !== undefined) {
        fds.set(call.ret, path);
        steps.push({ kind: 'open', path, at: call.at });
      }
    } else if (call.name === 'close') {
      if (fd !== null) fds.delete(fd);
    } else if (['write', 'pwrite64', 'writev', 'pwritev'].includes(call.name)) {
      if (fd === 1)
        steps.push({
          kind: 'respond',
          ids: [...call.args.matchAll(/\\"id\\":\s*(\d+)/g)].map((m) => Number(m[1])),
          at: call.at,
        });
      else if (fd !== null && fds.has(fd) && call.ret !== null && call.ret > 0)
        steps.push({ kind: 'write', path: fds.get(fd) as string, data: call.args, at: call.at });
    } else if (call.name === 'fsync' || call.name === 'fdatasync') {
      if (fd !== null && fds.has(fd) && call.ret === 0)
        steps.push({ kind: 'sync', path: fds.get(fd) as string, at: call.at });
    }
  }
  return steps;
}

/**
 * TJ-DUR-007 / TJ-CONF-026 from a trace: before the response to the `open` request `openId`, the new file `file` was
 * synced and its directory was synced after the file was first opened. Returns one line per violation.
 */
export function checkDurableOpen(trace: string, file: string, openId: number): string[] {
  const steps = traceSteps(trace);
  const answered = steps.find((s) => s.kind === 'respond' && s.ids?.includes(openId))?.at;
  if (answered === undefined) return [`the answer to open (id ${openId}) is not in the trace`];
  const created = steps.find((s) => s.kind === 'open' && s.path === file)?.at;
  if (created === undefined || created > answered) return [`${file} was not opened before open was answered`];
  const problems: string[] = [];
  if (!steps.some((s) => s.kind === 'sync' && s.path === file && s.at > created && s.at < answered))
    problems.push(`open was answered before the new file ${file} was fsynced (TJ-DUR-007)`);
  const directory = file.slice(0, file.lastIndexOf('/'));
  if (!steps.some((s) => s.kind === 'sync' && s.path === directory && s.at > created && s.at < answered))
    problems.push(
      `open was answered before the directory ${directory} was fsynced after the file was created (TJ-DUR-007)`,
    );
  return problems;
}

/**
 * TJ-DUR-015 from a trace: before the response to the `close` request `closeId`, the file was synced after its last
 * write. Returns one line per violation.
 */
export function checkSyncBeforeClose(trace: string, file: string, closeId: number): string[] {
  const steps = traceSteps(trace);
  const answered = steps.find((s) => s.kind === 'respond' && s.ids?.includes(closeId))?.at;
  if (answered === undefined) return [`the answer to close (id ${closeId}) is not in the trace`];
  const lastWrite = steps.filter((s) => s.kind === 'write' && s.path === file && s.at < answered).pop()?.at;
  if (lastWrite === undefined) return [`no write to ${file} before close was answered`];
  return steps.some((s) => s.kind === 'sync' && s.path === file && s.at > lastWrite && s.at < answered)
    ? []
    : [`close was answered without an fsync/fdatasync of ${file} after its last write (TJ-DUR-015)`];
}

/** The file descriptor a syscall's arguments start with. */
function fdOf(args: string): number | null {
  const match = /^(-?\d+)/.exec(args);
  return match === null ? null : Number(match[1]);
}
