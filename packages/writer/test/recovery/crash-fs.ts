import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { faultyFileSystem } from '../support/faulty-fs.js';
import { type FileSystem, nodeFileSystem } from '../support/internals.js';

/** Thrown by a {@link CrashPlan} at its crash step, and by every call after it. */
export class SimulatedCrash extends Error {
  constructor(step: number) {
    super(`simulated crash at step ${step}`);
    this.name = 'SimulatedCrash';
  }
}

/**
 * Counts steps (file-system calls and host hook calls) and "crashes" at step `at`: that call and every later one
 * throw, so nothing after the crash reaches the disk, as when the process dies there. Step `Infinity` never crashes.
 */
export class CrashPlan {
  steps = 0;
  crashed = false;
  constructor(readonly at: number) {}

  step(): void {
    if (this.crashed) throw new SimulatedCrash(this.at);
    if (this.steps++ === this.at) {
      this.crashed = true;
      throw new SimulatedCrash(this.at);
    }
  }

  /** The real file system with every call counted as a step (a step that crashes rejects the call). */
  fileSystem(base: FileSystem = nodeFileSystem): FileSystem {
    const fs = faultyFileSystem(base);
    fs.before = () => this.step();
    return fs;
  }
}

let deadPid: number | undefined;

/** The pid of a process that has exited. */
export function deadProcessId(): number {
  deadPid ??= Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout);
  return deadPid;
}

/**
 * After a simulated crash the lock files the "dead" writer left still name this (live) process; rewrite them to name
 * a process that has exited, which is what a real crash leaves.
 */
export function orphanLocks(dir: string): void {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) orphanLocks(path);
    else if (name.endsWith('.lock') || name.endsWith('.takeover')) {
      const holder = JSON.parse(readFileSync(path, 'utf8') || '{}') as Record<string, unknown>;
      writeFileSync(path, JSON.stringify({ ...holder, pid: deadProcessId(), host: hostname() }));
    }
  }
}
