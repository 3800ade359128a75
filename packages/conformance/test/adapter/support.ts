import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The repository root and the built CLI (the vitest global setup builds it first). */
export const repo = join(import.meta.dirname, '../../../..');
export const bin = join(repo, 'packages/conformance/dist/cli/main.js');
export const referenceAdapter = `node ${bin} adapter`;
export const brokenAdapter = (defect: string) => `node ${join(import.meta.dirname, 'broken-adapter.mjs')} ${defect}`;

/** Runs the built CLI asynchronously (so that several runs can overlap) and collects its output. */
export function turnjournal(...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: repo });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
    });
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
    });
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** Writes a throw-away fake adapter script and returns the command that runs it. */
export function fakeAdapter(source: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'tj-fake-adapter-'));
  const path = join(dir, 'adapter.mjs');
  writeFileSync(path, source);
  return `node ${path}`;
}

/** The JSON-lines loop every fake adapter shares: `answer(request)` returns the line(s) to write, or nothing. */
export function fakeLoop(answer: string): string {
  return `import { createInterface } from 'node:readline';
const answer = ${answer};
createInterface({ input: process.stdin }).on('line', (line) => {
  const request = JSON.parse(line);
  const out = answer(request);
  if (out !== undefined) process.stdout.write(out + '\\n');
});
`;
}

/** A start result claiming the reader level for the turn family. */
export const START = `{ name: 'fake', version: '0', language: 'js', protocol: 1, levels: ['reader'], families: ['turn'], durability: [] }`;
