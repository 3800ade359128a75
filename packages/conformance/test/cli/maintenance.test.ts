import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEventLog, openTurnJournal } from '@turnjournal/writer';
import { describe, expect, it } from 'vitest';

const repo = join(import.meta.dirname, '../../../..');
const bin = join(repo, 'packages/conformance/dist/cli/main.js');

function turnjournal(...args: string[]) {
  const result = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', cwd: repo });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** A store whose writer is gone, with one completed turn (4 days old) and one pending turn. */
async function store(): Promise<string> {
  const root = mkdtempSync(join(tmpdir(), 'tj-cli-maint-'));
  const dir = join(root, '_turn_journal');
  const journal = await openTurnJournal({ dir, sessionId: 'sess', clock: () => Date.now() - 96 * 3600 * 1000 });
  await journal.submit({ content: 'answered', turnId: 't-done' });
  await journal.complete('t-done');
  await journal.submit({ content: 'left hanging', turnId: 't-pending' });
  await journal.workerStarted('t-pending');
  await journal.close();
  return root;
}

describe('turnjournal recover (spec §12)', () => {
  it('prints the plan by default and changes nothing', async () => {
    const root = await store();
    const before = readFileSync(join(root, '_turn_journal/sess.jsonl'), 'utf8');
    const run = turnjournal('recover', root);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain(
      'sess t-pending (worker_started): ensure_user_message → ensure_interruption_marker → append_interrupted',
    );
    expect(run.stdout).toContain('run with --apply');
    expect(readFileSync(join(root, '_turn_journal/sess.jsonl'), 'utf8')).toBe(before);
  });

  it('needs --hooks or --journal-only to apply, and then closes the turn through the hooks module', async () => {
    const root = await store();
    expect(turnjournal('recover', '--apply', root).status).toBe(2);
    expect(turnjournal('recover', '--journal-only', root).status).toBe(2);
    const log = join(root, 'hooks.log');
    const hooks = join(root, 'hooks.mjs');
    writeFileSync(
      hooks,
      `import { appendFileSync } from 'node:fs';
export function ensureUserMessage(turn, submitted) { appendFileSync(${JSON.stringify(log)}, 'user ' + turn.turnId + ' ' + submitted.content + '\\n'); }
export function ensureInterruptionMarker(turn) { appendFileSync(${JSON.stringify(log)}, 'marker ' + turn.turnId + '\\n'); }
`,
    );
    const run = turnjournal('recover', '--apply', '--hooks', hooks, '--format', 'json', root);
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout).turns).toEqual([
      {
        session_id: 'sess',
        turn_id: 't-pending',
        performed: ['ensure_user_message', 'ensure_interruption_marker', 'append_interrupted'],
        outcome: 'recovered',
      },
    ]);
    expect(readFileSync(log, 'utf8')).toBe('user t-pending left hanging\nmarker t-pending\n');
    expect(turnjournal('recover', root).stdout).toContain('No abandoned turn');
    const audit = turnjournal('audit', '--format', 'json', root);
    expect(JSON.parse(audit.stdout).summary.findings.warn).toBe(0);
  });

  it('prints a plan whose messages together pass the longest string V8 makes, one planned turn at a time', () => {
    // 150 pending turns of 4 MiB each: 600 MiB of messages, more than one JSON string can hold (about 512 MiB), which
    // made `recover --format json` die with "RangeError: Invalid string length" (exit 3) before the output was streamed.
    const root = mkdtempSync(join(tmpdir(), 'tj-cli-bigplan-'));
    const dir = join(root, '_turn_journal');
    mkdirSync(dir);
    const content = 'x'.repeat(4 * 1024 * 1024);
    const line = (i: number) =>
      `${JSON.stringify({ version: 1, event: 'submitted', turn_id: `t${i}`, session_id: 's', created_at: 1, role: 'user', content })}\n`;
    const fd = openSync(join(dir, 's.jsonl'), 'w');
    for (let i = 0; i < 150; i += 1) writeSync(fd, line(i));
    closeSync(fd);
    const run = spawnSync(process.execPath, [bin, 'recover', '--format', 'json', root], {
      cwd: repo,
      maxBuffer: 1024 * 1024 * 1024,
    });
    expect(run.stderr.toString()).toBe('');
    expect(run.status).toBe(0);
    const out = run.stdout;
    expect(out.length).toBeGreaterThan(150 * content.length);
    // Spot checks instead of one parse: the whole output cannot be one string either.
    expect(out.subarray(0, 200).toString()).toMatch(
      /^\{\n {2}"command": "recover",\n {2}"applied": false,\n {2}"complete": true,\n {2}"plan": \[\n/,
    );
    expect(out.subarray(out.length - 200).toString()).toMatch(/"event_logs": \[\],\n {2}"settled": \[\]\n\}\n$/);
    expect(out.indexOf('"turn_id": "t149"')).toBeGreaterThan(0);
  }, 120_000);

  it('rejects a hooks module without the two functions (exit 2)', async () => {
    const root = await store();
    const hooks = join(root, 'empty.mjs');
    writeFileSync(hooks, 'export const nothing = 1;\n');
    const run = turnjournal('recover', '--apply', '--hooks', hooks, root);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('must export the functions ensureUserMessage and ensureInterruptionMarker');
  });
});

describe('turnjournal compact (spec §14)', () => {
  it('keeps everything while the audit is not clean, prunes after recovery, and honours --dry-run and --retention', async () => {
    const root = await store();
    expect(turnjournal('compact', root).stdout).toContain('sess: kept everything: the audit is not clean');
    expect(turnjournal('recover', '--apply', '--journal-only', root).status).toBe(0);
    // The interruption was just written, so only the 4-day-old completed turn is past a 48 h window.
    const dry = turnjournal('compact', '--dry-run', root);
    expect(dry.stdout).toContain('sess: would prune 1 turn(s)');
    expect(turnjournal('compact', '--retention', 'soon', root).status).toBe(2);
    const run = turnjournal('compact', '--format', 'json', '--retention', '72h', root);
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout).sweeps[0].sessions[0]).toMatchObject({
      session_id: 'sess',
      pruned_turn_ids: ['t-done'],
    });
    const check = JSON.parse(turnjournal('check', '--format', 'json', root).stdout);
    expect(check.summary.findings).toMatchObject({ error: 0, warn: 0 });
  });

  it('compacts event logs: drops what comes before a checkpoint once runs are finished, delivered and old (TJ-RET-012)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'tj-cli-events-'));
    const log = await openEventLog({ root, sessionId: 'chat', clock: () => Date.now() - 96 * 3600 * 1000 });
    await log.appendMessage({ role: 'user', content: 'hi' });
    await log.chatStarted({ requestId: 'r1' });
    await log.appendMessage({ role: 'assistant', content: 'hello' });
    await log.chatDone({ requestId: 'r1' });
    await log.ack('r1');
    const checkpoint = await log.checkpoint();
    await log.close();
    const dry = turnjournal('compact', '--dry-run', '--format', 'json', root);
    expect(JSON.parse(dry.stdout).event_logs).toEqual([]);
    const run = turnjournal('compact', '--format', 'json', root);
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout).event_logs[0]).toMatchObject({
      compacted: true,
      removed_records: 5,
      checkpoint_seq: checkpoint.seq,
    });
    expect(readFileSync(join(root, 'chat/events.jsonl'), 'utf8').trim().split('\n')).toHaveLength(1);
    expect(turnjournal('compact', root).stdout).toContain('kept everything (nothing_before_checkpoint)');
  });

  it('refuses options that belong to another command', () => {
    expect(turnjournal('compact', '--apply', 'examples').status).toBe(2);
    expect(turnjournal('recover', '--retention', '1h', 'examples').status).toBe(2);
  });
});
