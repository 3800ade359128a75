import { readdirSync, readFileSync } from 'node:fs';

/**
 * Errors of a read of /proc that mean "not there": a process that ended meanwhile (ENOENT, or ESRCH for a file of a
 * process that exited while it was read), or a /proc this process may not read (EACCES). Any other is thrown.
 */
function isAbsentFromProc(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ESRCH' || code === 'EACCES';
}

// The adapter runs in a process group of its own (`sh -c` as the leader, the implementation and anything it starts
// behind it). These helpers look at that group through /proc, so they answer on Linux only.

/** True when /proc shows processes and their memory (Linux). */
export function processTableAvailable(): boolean {
  if (process.platform !== 'linux') return false;
  try {
    return /^VmHWM:/m.test(readFileSync('/proc/self/status', 'utf8'));
  } catch (error) {
    if (!isAbsentFromProc(error)) throw error;
    return false;
  }
}

/** The pids of the processes whose process group is `pgid`; empty where /proc is missing. */
export function processGroupMembers(pgid: number): number[] {
  if (process.platform !== 'linux') return [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch (error) {
    if (!isAbsentFromProc(error)) throw error;
    return [];
  }
  const members: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // After the command name in parentheses (which may itself hold spaces and parentheses): state, ppid, pgrp, ...
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid) members.push(Number(entry));
    } catch (error) {
      // The process ended meanwhile.
      if (!isAbsentFromProc(error)) throw error;
    }
  }
  return members;
}

/**
 * The sum of the peak resident set sizes (VmHWM) of the group's live members, in bytes. A member's peak never falls,
 * so two samples of one long-lived process bracket what it used between them.
 */
export function processGroupPeakBytes(pgid: number): number {
  let total = 0;
  for (const pid of processGroupMembers(pgid)) {
    try {
      const match = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (match !== null) total += Number(match[1]) * 1024;
    } catch (error) {
      // Ended meanwhile.
      if (!isAbsentFromProc(error)) throw error;
    }
  }
  return total;
}
