// A "host" of the multi-process tests: a child process running one of this directory's scripts, and the lines it
// printed so far.
import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const support = dirname(fileURLToPath(import.meta.url));
/** Hang guard of a wait for a host's output: far above the seconds the hosts need. */
export const WAIT_MS = 60_000;

export interface HostProcess {
  readonly child: ChildProcess;
  /** Every line printed on stdout so far. */
  readonly lines: string[];
  /** Waits for a printed line that satisfies `done`; fails when the host exits first or after {@link WAIT_MS}. */
  until(what: string, done: (line: string) => boolean): Promise<void>;
  /** Waits for the process to exit; answers its exit code or signal. */
  exited(): Promise<number | string>;
}

/** Every host started, for the test file's `afterAll` to kill what a failed test left running. */
export const hosts = new Set<ChildProcess>();

/** Kills every host still running (a failed test's): it would hold its connections and keep the server from stopping. */
export function killHosts(): void {
  for (const child of hosts) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

/** Starts `node <script> ...args` from this directory. */
export function startHost(script: string, args: string[]): HostProcess {
  const child: ChildProcess = spawn(process.execPath, [join(support, script), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  hosts.add(child);
  const lines: string[] = [];
  let stderr = '';
  let exit: number | string | undefined;
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const waiter of waiters) waiter();
  };
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
    lines.push(line);
    wake();
  });
  child.stderr?.on('data', (chunk) => {
    stderr += String(chunk);
  });
  const exited = new Promise<number | string>((resolve) =>
    child.on('exit', (code, signal) => {
      exit = code ?? signal ?? 'unknown';
      resolve(exit);
      wake();
    }),
  );
  return {
    child,
    lines,
    exited: () => exited,
    async until(what: string, done: (line: string) => boolean): Promise<void> {
      const deadline = Date.now() + WAIT_MS;
      while (!lines.some(done)) {
        if (exit !== undefined) throw new Error(`${script} exited (${exit}) before ${what}: ${stderr.trim()}`);
        if (Date.now() > deadline) throw new Error(`${script}: timed out waiting for ${what}: ${stderr.trim()}`);
        await new Promise<void>((resolve) => {
          waiters.add(resolve);
          setTimeout(resolve, 100);
        }).finally(() => waiters.clear());
      }
    },
  };
}
