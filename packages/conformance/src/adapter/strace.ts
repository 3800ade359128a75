import { spawnSync } from 'node:child_process';

/** The syscalls the strace-based checks trace. */
export const STRACE_SYSCALLS =
  'openat,close,write,pwrite64,writev,pwritev,fsync,fdatasync,rename,renameat,renameat2,link,linkat,mkdir,mkdirat,unlink,unlinkat';

/** True on Linux when `strace` runs and may trace a child. */
export function straceAvailable(): boolean {
  if (process.platform !== 'linux') return false;
  // Tracing a trivial command proves both that strace exists and that ptrace is allowed (containers may forbid it).
  const probe = spawnSync('strace', ['-f', '-qq', '-e', 'trace=none', '--', 'true'], {
    stdio: 'ignore',
    timeout: 10_000,
  });
  return probe.status === 0;
}

/** The wrapper that runs an adapter under strace, writing the trace to `traceFile`. */
export function straceWrapper(traceFile: string): string[] {
  return ['strace', '-f', '-qq', '-s', '1000000', '-e', `trace=${STRACE_SYSCALLS}`, '-o', traceFile, '--'];
}

interface Syscall {
  readonly name: string;
  readonly args: string;
  readonly ret: number | null;
  /** Index of the trace line where the call started. */
  readonly start: number;
  /** Index of the trace line where it returned. */
  readonly end: number;
}

/** Parses an `strace -f` trace into calls with their start and end positions (unfinished/resumed pairs joined). */
export function parseStrace(text: string): Syscall[] {
  const calls: Syscall[] = [];
  const pending = new Map<string, { name: string; args: string; start: number }>();
  const lines = text.split('\n');
  lines.forEach((line, index) => {
    const resumed = /^(\d+)\s+<\.\.\. (\w+) resumed>(.*)$/.exec(line);
    if (resumed !== null) {
      const [, pid, name, rest] = resumed as unknown as [string, string, string, string];
      const started = pending.get(pid);
      pending.delete(pid);
      if (started === undefined || started.name !== name) return;
      calls.push({ name, args: started.args + rest, ret: returned(rest), start: started.start, end: index });
      return;
    }
    const call = /^(\d+)\s+(\w+)\((.*)$/.exec(line);
    if (call === null) return;
    const [, pid, name, rest] = call as unknown as [string, string, string, string];
    if (rest.endsWith('<unfinished ...>')) {
      pending.set(pid, { name, args: rest.slice(0, -'<unfinished ...>'.length), start: index });
      return;
    }
    calls.push({ name, args: rest, ret: returned(rest), start: index, end: index });
  });
  return calls;
}

function returned(rest: string): number | null {
  const match = /\)\s+=\s+(-?\d+)/.exec(rest.slice(Math.max(0, rest.lastIndexOf(') ='))));
  return match === null ? null : Number(match[1]);
}

/** An acknowledged append the harness saw: its request id and the sequence number its record carries. */
export interface TracedAck {
  /** Request id. */
  readonly id: number;
  /** The record's `x_tj_seq`. */
  readonly seq: number;
}

/**
 * Checks from a trace that every acknowledged append's bytes were written to `file` and then covered by an
 * fsync/fdatasync of that file that returned before the adapter started writing the acknowledgement to stdout
 * (TJ-CONF-014, TJ-DUR-003). Returns one line per violation.
 */
export function checkSyncBeforeAck(trace: string, file: string, acks: readonly TracedAck[]): string[] {
  const calls = parseStrace(trace).sort((a, b) => a.end - b.end);
  const quoted = JSON.stringify(file);
  const fds = new Map<number, string>();
  const writtenAt = new Map<number, number>();
  const syncs: number[] = [];
  const ackAt = new Map<number, number>();
  // Process in start order for ack writes and in end order for the rest: a call's effect counts when it returns.
  const events = calls.map((c) => ({ ...c, at: c.name === 'write' && fdOf(c.args) === 1 ? c.start : c.end }));
  events.sort((a, b) => a.at - b.at);
  for (const call of events) {
    const fd = fdOf(call.args);
    if (call.name === 'openat') {
      if (call.ret !== null && call.ret >= 0) fds.set(call.ret, call.args.includes(quoted) ? file : 'other');
    } else if (call.name === 'close') {
      if (fd !== null) fds.delete(fd);
    } else if (['write', 'pwrite64', 'writev', 'pwritev'].includes(call.name)) {
      if (fd === 1) for (const m of call.args.matchAll(/\\"id\\":\s*(\d+)/g)) ackAt.set(Number(m[1]), call.at);
      else if (fd !== null && fds.get(fd) === file && call.ret !== null && call.ret > 0)
        for (const m of call.args.matchAll(/\\"x_tj_seq\\":\s*(\d+)/g))
          if (!writtenAt.has(Number(m[1]))) writtenAt.set(Number(m[1]), call.at);
    } else if (call.name === 'fsync' || call.name === 'fdatasync') {
      if (fd !== null && fds.get(fd) === file && call.ret === 0) syncs.push(call.at);
    }
  }
  const problems: string[] = [];
  for (const ack of acks) {
    const sent = ackAt.get(ack.id);
    const written = writtenAt.get(ack.seq);
    if (sent === undefined) problems.push(`append id ${ack.id}: its acknowledgement is not in the trace`);
    else if (written === undefined)
      problems.push(`append id ${ack.id} (x_tj_seq ${ack.seq}): no write of its bytes to ${file} in the trace`);
    else if (!syncs.some((s) => s > written && s < sent))
      problems.push(
        `append id ${ack.id} (x_tj_seq ${ack.seq}): acknowledged (trace line ${sent + 1}) without an fsync/fdatasync of the file after its write (trace line ${written + 1})`,
      );
  }
  return problems;
}

function fdOf(args: string): number | null {
  const match = /^(-?\d+)/.exec(args);
  return match === null ? null : Number(match[1]);
}
