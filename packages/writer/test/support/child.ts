import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** The child-process fixture of the durability tests (it imports the built package). */
export const CRASH_CHILD = join(dirname(fileURLToPath(import.meta.url)), '..', 'durability', 'crash-child.mjs');

/** How long a test waits for a line from a child before it gives up (a hang guard, not a timed assertion). */
const LINE_TIMEOUT_MS = 20_000;

/** A running child fixture: its output lines and ways to wait for them, signal it and talk to it. */
export interface FixtureProcess {
  /** The child's pid. */
  readonly pid: number;
  /** Every stdout line so far. */
  readonly lines: readonly string[];
  /** Everything it wrote to stderr so far (for failure messages). */
  stderr(): string;
  /** Resolves with the first line (already seen or to come) for which `match` is true. */
  waitForLine(match: (line: string) => boolean, what: string): Promise<string>;
  /** Writes one line to its stdin. */
  send(line: string): void;
  /** Sends SIGKILL. */
  kill(): void;
  /** Resolves once it has exited, been reaped and its output is fully read. */
  readonly closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts the fixture `crash-child.mjs` with `config` (see the comment at its top). The child's stdin stays open: the
 * child exits on its own when the test process goes away.
 */
export function startFixture(config: Record<string, unknown>): FixtureProcess {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [CRASH_CHILD, JSON.stringify(config)], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const waiters: { match: (line: string) => boolean; resolve: (line: string) => void }[] = [];
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdin.on('error', () => undefined); // writing to a killed child
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(line);
    for (let i = waiters.length - 1; i >= 0; i--) {
      const waiter = waiters[i];
      if (waiter?.match(line)) {
        waiters.splice(i, 1);
        waiter.resolve(line);
      }
    }
  });
  let exited = false;
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => {
      exited = true;
      resolve({ code, signal });
    }),
  );
  return {
    pid: child.pid as number,
    lines,
    stderr: () => stderr,
    waitForLine(match, what) {
      const seen = lines.find(match);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => {
          child.kill('SIGKILL');
          reject(
            new Error(
              `child ${child.pid} never printed ${what}; stdout tail ${JSON.stringify(lines.slice(-5))}, stderr ${stderr}`,
            ),
          );
        }, LINE_TIMEOUT_MS);
        waiters.push({
          match,
          resolve: (line) => {
            clearTimeout(timer);
            resolve(line);
          },
        });
        void closed.then(() => {
          if (lines.find(match) !== undefined) return;
          clearTimeout(timer);
          reject(
            new Error(
              `child ${child.pid} exited without printing ${what}; stdout tail ${JSON.stringify(lines.slice(-5))}, stderr ${stderr}`,
            ),
          );
        });
      });
    },
    send(line) {
      if (!exited) child.stdin.write(`${line}\n`);
    },
    kill() {
      child.kill('SIGKILL');
    },
    closed,
  };
}

/** The pid of a process that has run and exited (and been reaped): a holder that is provably dead. */
export async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => child.on('close', resolve));
  return child.pid as number;
}
