// `turnjournal recover --apply` says which files it left plain JSONL at rest (TJ-RECOV-014), and `turnjournal compact`
// skips, with the reason, an event log whose foreign writer's lock it cannot take here (TJ-DUR-053), instead of
// failing the whole run.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';

const repo = join(import.meta.dirname, '../../../..');
const bin = join(repo, 'packages/conformance/dist/cli/main.js');

function turnjournal(args: readonly string[], env: NodeJS.ProcessEnv = process.env) {
  const result = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', cwd: repo, env });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const line = (record: Record<string, unknown>) => `${JSON.stringify(record)}\n`;
/** A pid no process can have here: above the kernel's largest (2^22). */
const DEAD_PID = 4_194_304 + 17;

describe('the CLI and files at rest', () => {
  it('recover --apply lists the files it left plain JSONL at rest: space cut, a dead writer’s lock removed', () => {
    const root = mkdtempSync(join(tmpdir(), 'tj-rest-'));
    const journal = join(root, '_turn_journal', 's.jsonl');
    mkdirSync(dirname(journal));
    const turn = { version: 1, turn_id: 't1', session_id: 's', created_at: 1_770_000_000 };
    const lines =
      line({ ...turn, event: 'submitted', role: 'user', content: 'hi' }) + line({ ...turn, event: 'completed' });
    // What a writer killed after its last append leaves: its pre-allocated space, and its lock.
    writeFileSync(journal, Buffer.concat([Buffer.from(lines), Buffer.alloc(4096)]));
    writeFileSync(`${journal}.lock`, JSON.stringify({ pid: DEAD_PID, host: hostname(), token: 'gone', created_at: 1 }));

    const run = turnjournal(['recover', root, '--apply', '--journal-only', '--format', 'json']);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect((JSON.parse(run.stdout) as { settled: unknown }).settled).toEqual([
      { file: journal, trimmed_bytes: 4096, removed_lock: true },
    ]);
    expect(readFileSync(journal, 'utf8')).toBe(lines);
    expect(existsSync(`${journal}.lock`)).toBe(false);
  });

  it('compact skips an event log whose foreign lock file exists when flock(1) cannot be run here', () => {
    const root = mkdtempSync(join(tmpdir(), 'tj-rest-'));
    const log = join(root, 'chat', 'events.jsonl');
    mkdirSync(dirname(log));
    writeFileSync(
      log,
      line({
        v: 1,
        seq: 0,
        ts: '2026-01-01T00:00:00.000Z',
        type: 'message_append',
        payload: { message: { role: 'user', content: 'hi' } },
      }),
    );
    writeFileSync(join(root, 'chat', '.events.jsonl.lock'), '');
    // No flock(1) on this PATH: the lock gptme's writer takes cannot be taken.
    const run = turnjournal(['compact', root, '--format', 'json'], { ...process.env, PATH: '/nonexistent' });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const logs = (JSON.parse(run.stdout) as { event_logs: { file: string; skipped?: string }[] }).event_logs;
    expect(logs.map((entry) => entry.file)).toEqual([log]);
    expect(logs[0]?.skipped).toMatch(/flock/);
  });
});
