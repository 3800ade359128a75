// Test harness of the AI SDK chat example: server.mjs as a real child process (so it can be SIGKILLed), a store per
// test, and the CLI's check of what the server wrote.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach } from 'vitest';

const EXAMPLE = join(dirname(fileURLToPath(import.meta.url)), '..');
const SERVER = join(EXAMPLE, 'server.mjs');
const CLI = join(EXAMPLE, '..', '..', 'packages', 'conformance', 'dist', 'cli', 'main.js');

/** The system browser (Debian's `chromium`); never a downloaded one. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const cleanup: Array<() => void> = [];
afterEach(() => {
  for (const step of cleanup.splice(0).reverse()) step();
});

/** A fresh store directory, removed after the test. */
export function store(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tj-ai-chat-'));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Starts server.mjs on `root` (`port` 0 for any), the mock model one word every `wordMs`; resolves once it listens. */
export async function startServer(
  root: string,
  { port = 0, wordMs = 40 }: { port?: number; wordMs?: number } = {},
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [SERVER, '--root', root, '--port', String(port), '--word-ms', String(wordMs)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  cleanup.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let output = '';
  child.stderr?.on('data', (data) => {
    output += String(data);
  });
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (data) => {
      output += String(data);
      const listening = /on (http:\/\/[\d.]+:\d+)\//.exec(output);
      if (listening !== null) resolve({ child, url: listening[1] as string });
    });
    child.on('exit', (code, signal) => reject(new Error(`server.mjs exited (${code ?? signal}):\n${output}`)));
  });
}

/** `turnjournal check --format json <root>` through the built CLI: its findings; rejects unless it exits 0. */
export function checkStore(root: string): Promise<{ clean: boolean; findings: unknown[] }> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [CLI, 'check', '--format', 'json', root], (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`turnjournal check exited ${error.code}: ${stdout}${stderr}`));
      else resolve(JSON.parse(stdout) as { clean: boolean; findings: unknown[] });
    });
  });
}
