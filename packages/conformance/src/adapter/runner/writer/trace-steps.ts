import { parseStrace } from '../../strace.js';

// The strace-based checks of open and close: internal to the runner (not exported from the package).
/** One step of a traced adapter that the durability checks look at, in the order it took effect. */
export interface TraceStep {
  readonly kind: 'open' | 'write' | 'sync' | 'respond' | 'link' | 'mkdir' | 'unlink';
  /**
   * The path the descriptor was opened on (`open`, `write`, `sync`), the path a `link` (link or rename) made appear,
   * the directory created (`mkdir`) or the name removed (`unlink`), as it appears in the trace.
   */
  readonly path?: string;
  /** The source of a `link` (link or rename). */
  readonly from?: string;
  /** True for a rename (`link`): the source name is gone afterwards. */
  readonly moved?: boolean;
  /** True for an `open` with `O_CREAT`. */
  readonly creates?: boolean;
  /** The request ids a response write carries (`respond`). */
  readonly ids?: readonly number[];
  /** The arguments of a `write` as strace printed them: the bytes written, escaped (`write`). */
  readonly data?: string;
  /** Position in the trace (line index where the step took effect). */
  readonly at: number;
}

/**
 * The steps of a trace (see {@link straceWrapper}): successful opens, writes and syncs by path, links, renames,
 * directory creations and removals by name, and response writes to fd 1 by request id. A response counts from when its
 * write started; everything else from when it returned. Paths are taken as printed, so the harness passes absolute
 * paths and relative ones (or a directory descriptor other than `AT_FDCWD`) are not resolved.
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
        steps.push({ kind: 'open', path, creates: /\bO_CREAT\b/.test(call.args), at: call.at });
      }
    } else if (LINKS.has(call.name) || MKDIRS.has(call.name) || UNLINKS.has(call.name)) {
      if (call.ret !== 0) continue;
      const names = quotedNames(call.args);
      // linkat(fd, "", …, AT_EMPTY_PATH) links an open descriptor (an O_TMPFILE): its source is the descriptor's path.
      const from = names[0] === '' && fd !== null ? (fds.get(fd) ?? '') : names[0];
      if (LINKS.has(call.name) && names.length >= 2)
        steps.push({
          kind: 'link',
          from: from as string,
          path: names[1] as string,
          moved: call.name.startsWith('rename'),
          at: call.at,
        });
      else if (names.length >= 1)
        steps.push({ kind: MKDIRS.has(call.name) ? 'mkdir' : 'unlink', path: names[0] as string, at: call.at });
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
 * TJ-DUR-029 from a trace: before the answer to request `id`, the lock file `lock` first appeared by a link or rename
 * of a file that had been written and then synced, never by an open that creates it (the lock would be visible, and
 * after a crash left, empty: naming no holder, it could never be proved dead). Returns one line per violation.
 */
export function checkLockAppearsWhole(trace: string, lock: string, id: number): string[] {
  const steps = traceSteps(trace);
  const answered = answerAt(steps, id);
  if (answered === undefined) return [`the answer to request ${id} is not in the trace`];
  const appeared = steps.find(
    (s) => s.path === lock && s.at < answered && (s.kind === 'link' || (s.kind === 'open' && s.creates === true)),
  );
  if (appeared === undefined)
    return [`the lock ${lock} did not appear before the answer (no link, rename or creating open of it in the trace)`];
  if (appeared.kind === 'open')
    return [
      `the lock ${lock} was created in place by an open with O_CREAT: it exists empty until its content is written, and stays empty after a crash (TJ-DUR-029)`,
    ];
  const from = appeared.from as string;
  const written = steps.find((s) => s.kind === 'write' && s.path === from && s.at < appeared.at);
  if (written === undefined)
    return [`the lock ${lock} was linked from ${from}, which was not written first (TJ-DUR-029)`];
  if (!syncedBetween(steps, from, written.at, appeared.at))
    return [
      `the lock ${lock} was linked from ${from} before that file was synced: after a crash the lock can be empty (TJ-DUR-029)`,
    ];
  return [];
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

const LINKS = new Set(['link', 'linkat', 'rename', 'renameat', 'renameat2']);
const MKDIRS = new Set(['mkdir', 'mkdirat']);
const UNLINKS = new Set(['unlink', 'unlinkat']);

/** The quoted strings (path names) of a syscall's arguments, unescaped as far as the harness's paths need. */
function quotedNames(args: string): string[] {
  return [...args.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => (m[1] as string).replace(/\\(["\\])/g, '$1'));
}

/** The position of the answer to request `id`, or undefined. */
export const answerAt = (steps: readonly TraceStep[], id: number): number | undefined =>
  steps.find((s) => s.kind === 'respond' && s.ids?.includes(id))?.at;

/** The first write to `path` whose bytes contain `marker` (as strace escapes them: `\"` for `"`). */
export const writeWith = (steps: readonly TraceStep[], path: string, marker: string): TraceStep | undefined =>
  steps.find((s) => s.kind === 'write' && s.path === path && s.data?.includes(marker.replaceAll('"', '\\"')));

/** True when the trace holds a sync of `path` after position `from` and before position `to`. */
export const syncedBetween = (steps: readonly TraceStep[], path: string, from: number, to: number): boolean =>
  steps.some((s) => s.kind === 'sync' && s.path === path && s.at > from && s.at < to);

/** The file descriptor a syscall's arguments start with. */
function fdOf(args: string): number | null {
  const match = /^(-?\d+)/.exec(args);
  return match === null ? null : Number(match[1]);
}
