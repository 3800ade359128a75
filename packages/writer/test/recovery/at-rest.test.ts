import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { checkStore } from '@turnjournal/reader';
import { describe, expect, it } from 'vitest';
import { JOURNAL_ONLY_HOOKS, openRunWriter, recoverStore } from '../support/internals.js';
import { tempDir } from '../support/temp.js';

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'at-rest-child.mjs');
/** A hang guard for the child's start-up, not a timed assertion. */
const READY_TIMEOUT_MS = 30_000;

/** Runs at-rest-child.mjs on `root` and SIGKILLs it once its writers hold their files with their records durable. */
async function killedWriters(root: string): Promise<void> {
  const child = spawn(process.execPath, [CHILD, root], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_code, signal) => resolve(signal)));
  const ready = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), READY_TIMEOUT_MS);
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.startsWith('ready ')) {
        clearTimeout(timer);
        resolve(true);
      }
    });
    child.on('close', () => resolve(false));
  });
  child.kill('SIGKILL');
  expect(await exited, `the child must die by SIGKILL; stderr: ${stderr}`).toBe('SIGKILL');
  expect(ready, `the child never got ready; stderr: ${stderr}`).toBe(true);
}

/** Every `.jsonl` file under `dir` and every other file beside them, by path relative to `dir`. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1))
    .sort();
}

/** What a naive reader does: one `JSON.parse` per LF-ended line, nothing else allowed in the file. */
function naiveRead(file: string): unknown[] {
  const text = readFileSync(file, 'utf8');
  expect(text.endsWith('\n'), `${file} ends with its last line's LF`).toBe(true);
  return text
    .slice(0, -1)
    .split('\n')
    .map((line) => JSON.parse(line) as unknown);
}

const JOURNALS = ['_turn_journal/sess-t~1.jsonl', 'sess-e/events.jsonl', 'sessions/2026/02/04/run-1.jsonl'];

describe('startup recovery leaves files whose writer is gone plain JSONL at rest (TJ-RECOV-014, TJ-RECOV-015)', () => {
  it('a SIGKILLed writer of each family leaves NUL space and locks; recoverStore removes both and keeps every record', async () => {
    const root = tempDir();
    await killedWriters(root);
    // What the crash left: every journal ends in pre-allocated space (§3.8) and has its lock beside it.
    expect(filesUnder(root)).toEqual(JOURNALS.flatMap((file) => [file, `${file}.lock`]).sort());
    for (const file of JOURNALS) expect(readFileSync(join(root, file)).at(-1), file).toBe(0);
    const before = await checkStore([root]);

    const recovery = await recoverStore([root], { apply: true, hooks: JOURNAL_ONLY_HOOKS });

    // Nothing was abandoned: no turn, no run to close; only the files at rest were settled.
    expect([...recovery.plan]).toEqual([]);
    expect(recovery.eventLogs).toEqual([]);
    expect(recovery.settled.map((s) => s.file.slice(root.length + 1)).sort()).toEqual(JOURNALS);
    for (const settled of recovery.settled) {
      expect(settled.removedLock).toBe(true);
      expect(settled.trimmedBytes).toBeGreaterThan(0);
    }
    expect(filesUnder(root)).toEqual(JOURNALS);
    for (const file of JOURNALS) naiveRead(join(root, file));
    expect(naiveRead(join(root, JOURNALS[2] as string)).map((r) => (r as { type: string }).type)).toEqual([
      'header',
      'run.start',
      'run.status',
    ]);
    // The same records and derived state as before: only space and locks went.
    const after = await checkStore([root]);
    expect(after.files.map((f) => [f.path, f.records])).toEqual(before.files.map((f) => [f.path, f.records]));
    expect(after.findings).toEqual(before.findings);
    expect(after.runs).toEqual(before.runs);

    // A second recovery finds nothing left to settle.
    const again = await recoverStore([root], { apply: true, hooks: JOURNAL_ONLY_HOOKS });
    expect(again.settled).toEqual([]);
  });

  it('leaves a file a live writer holds as it is, space and lock included (TJ-RECOV-015)', async () => {
    const root = tempDir();
    const run = await openRunWriter({ root, runId: 'run-live', header: { startedAt: '2026-02-04T00:00:00.000Z' } });
    try {
      await run.runStart('still running');
      const file = run.path;
      const bytes = readFileSync(file);
      expect(bytes.at(-1)).toBe(0);
      const recovery = await recoverStore([root], { apply: true, hooks: JOURNAL_ONLY_HOOKS });
      expect(recovery.settled).toEqual([]);
      expect(readFileSync(file)).toEqual(bytes);
      expect(existsSync(`${file}.lock`)).toBe(true);
    } finally {
      await run.close();
    }
  });
});
