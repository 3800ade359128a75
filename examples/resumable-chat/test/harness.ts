// Test harness of the resumable chat: the server as a real child process (so it can be SIGKILLed), its test hooks,
// the journals it wrote, and the system Chromium.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const EXAMPLE = join(dirname(fileURLToPath(import.meta.url)), '..');
export const REPO = join(EXAMPLE, '..', '..');
const CLI = join(REPO, 'packages', 'conformance', 'dist', 'cli', 'main.js');

/** The system browser (Debian's `chromium`); never a downloaded one. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export interface ChatServer {
  readonly url: string;
  readonly port: number;
  /** Where its journals are: a directory, or a `postgres://…?store=` URL. */
  readonly root: string;
  readonly process: ChildProcess;
  /** Calls a test hook; resolves with its JSON answer once the server-side event happened. */
  hook(path: string): Promise<unknown>;
  /** SIGKILL, and wait for the process to be gone. */
  kill(): Promise<void>;
  /** Graceful stop (SIGTERM), waiting for the exit. */
  stop(): Promise<void>;
}

/**
 * Starts `server.mjs` with test hooks on `root` (a directory, or a PostgreSQL store's URL given as `--store`; and
 * `port`, 0 for any); resolves once it listens.
 */
export async function startServer(options: { root: string; port?: number; tokenMs?: number }): Promise<ChatServer> {
  const args = [
    join(EXAMPLE, 'server.mjs'),
    /^postgres(ql)?:\/\//.test(options.root) ? '--store' : '--root',
    options.root,
    '--port',
    String(options.port ?? 0),
    '--token-ms',
    String(options.tokenMs ?? 8),
    '--test-hooks',
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += String(chunk);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const listening = await new Promise<{ url: string; port: number }>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { event?: string; url?: string; port?: number };
        if (entry.event === 'listening') resolve({ url: entry.url as string, port: entry.port as number });
      } catch {
        // not a log line
      }
    });
    child.once('exit', (code) => reject(new Error(`server exited (${code}) before listening: ${stderr}`)));
  });
  return {
    ...listening,
    root: options.root,
    process: child,
    async hook(path) {
      const response = await fetch(new URL(`/test/${path}`, listening.url), { method: 'POST' });
      if (!response.ok) throw new Error(`hook ${path}: HTTP ${response.status}`);
      return response.json();
    },
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

export interface CheckReport {
  clean: boolean;
  summary: { turns: number; findings: { error: number; warn: number; info: number } };
  sessions: { session_id: string; turns: { turn_id: string; state: string }[] }[];
  event_logs: { session_id: string; last_seq: number | null; undelivered: unknown[] }[];
  findings: unknown[];
}

/** `turnjournal <args>` through the built CLI; resolves with its output, rejects unless it exits 0. */
function turnjournal(args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [CLI, ...args], (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`turnjournal ${args[0]} exited ${error.code}: ${stdout}${stderr}`));
      else resolve(stdout);
    });
  });
}

/** `turnjournal check --format json <root>` (a directory or a store URL) through the built CLI. */
export async function checkStore(root: string): Promise<CheckReport> {
  return JSON.parse(await turnjournal(['check', '--format', 'json', root])) as CheckReport;
}

/**
 * A directory holding the journals of `root`: the directory itself, or for a store URL a fresh copy made by
 * `turnjournal export` (byte for byte), which the file readers below then read as they read a server's directory.
 */
export async function journalDirectory(root: string): Promise<string> {
  if (!/^postgres(ql)?:\/\//.test(root)) return root;
  const dir = mkdtempSync(join(tmpdir(), 'tj-chat-export-'));
  await turnjournal(['export', root, dir]);
  return dir;
}

export interface EventRecord {
  seq: number;
  type: string;
  payload?: Record<string, unknown>;
  /** The log's epoch, on the first record and the checkpoints (spec §6.7). */
  epoch?: string;
}

/**
 * The records of a session's event log, parsed line by line (an independent reading of what the hub wrote). The NUL
 * bytes that end a log the hub holds open are its pre-allocated space (spec §3.8), not a line.
 */
export function eventRecords(root: string, sessionId: string): EventRecord[] {
  const path = join(root, sessionId, 'events.jsonl');
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .replace(/\0+$/, '')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as EventRecord);
}

/** The committed messages of the event log, folded from its `message_append` records (the hub only appends). */
export function committedMessages(root: string, sessionId: string): Record<string, unknown>[] {
  return eventRecords(root, sessionId)
    .filter((record) => record.type === 'message_append')
    .map((record) => record.payload?.message as Record<string, unknown>);
}
