// The `turnjournal` CLI on a PostgreSQL store (spec §19.1): `check`, `audit`, `recover` and `compact` take a
// `postgres://…?store=<name>` URL and reach the database through the record-store seam, as they reach files through
// the file store — from a real server this file starts.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { auditStore } from '@turnjournal/reader';
import { openEventLog, openTurnJournal } from '@turnjournal/writer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresRecordStore } from '../src/index.js';
import { type PostgresServer, startPostgres } from './support/postgres-server.js';

const repo = fileURLToPath(new URL('../../..', import.meta.url));
const bin = join(repo, 'packages/conformance/dist/cli/main.js');
const DAY = 86_400_000;

let server: PostgresServer;
beforeAll(() => {
  server = startPostgres();
});
afterAll(() => server?.stop());

function turnjournal(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', timeout: 120_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The server's URL with a store name, and optionally a password the report must never print. */
function urlOf(store: string, password?: string): string {
  const base = server.connectionString.replace('://turnjournal@', `://turnjournal${password ? `:${password}` : ''}@`);
  return `${base}?store=${store}`;
}

/** A host that answered one turn three days ago, then stopped mid-turn and mid-run. */
async function leftByAStoppedHost(store: string): Promise<void> {
  const pg = openPostgresRecordStore({ connectionString: server.connectionString, store });
  try {
    const old = () => Date.now() - 3 * DAY;
    const turns = await openTurnJournal({ store: pg, sessionId: 'sess', shard: 'host-a', clock: old });
    await turns.submit({ content: 'answered long ago', turnId: 't-done' });
    await turns.complete('t-done');
    await turns.submit({ content: 'never answered', turnId: 't-pending' });
    await turns.workerStarted('t-pending');
    await turns.close();
    const log = await openEventLog({ store: pg, sessionId: 'chat' });
    await log.chatStarted({ requestId: 'r-open' });
    await log.segmentStarted({ requestId: 'r-open', messageId: 'm1' });
    await log.delta({ requestId: 'r-open', messageId: 'm1', text: 'half an answ' });
    await log.close();
  } finally {
    await pg.close();
  }
}

describe('turnjournal on postgres:// (spec §19.1)', () => {
  it('checks, audits, recovers and compacts a store in the database, and prints no password', async () => {
    await leftByAStoppedHost('cli');
    const url = urlOf('cli', 'secret-word');

    const check = turnjournal('check', url, '--format', 'json');
    expect(check.stderr).toBe('');
    expect(check.status).toBe(0);
    const report = JSON.parse(check.stdout) as { files: { path: string; family: string }[] };
    expect(report.files.map((file) => [file.path, file.family])).toEqual([
      ['postgres:cli/_turn_journal/sess~host-a.jsonl', 'turn'],
      ['postgres:cli/chat/events.jsonl', 'event'],
    ]);
    expect(check.stdout).not.toContain('secret-word');

    const audit = turnjournal('audit', url, '--format', 'json');
    expect(audit.status).toBe(0);
    const plan = (JSON.parse(audit.stdout) as { plan?: { turn_id: string }[] }).plan ?? [];
    expect(plan.map((turn) => turn.turn_id)).toEqual(['t-pending']);

    const recover = turnjournal('recover', url, '--apply', '--journal-only', '--format', 'json');
    expect(recover.stderr).toBe('');
    expect(recover.status).toBe(0);
    const after = turnjournal('audit', url, '--format', 'json');
    expect((JSON.parse(after.stdout) as { plan?: unknown[] }).plan ?? []).toEqual([]);
    const pg = openPostgresRecordStore({ connectionString: server.connectionString, store: 'cli' });
    try {
      const audited = await auditStore(pg);
      const states = audited.check.sessions.flatMap((s) => s.turns.map((t) => [t.turnId, t.state]));
      expect(states).toEqual([
        ['t-done', 'completed'],
        ['t-pending', 'interrupted'],
      ]);
      expect(
        audited.check.eventLogs.map((log) => log.activeRequestId),
        'the open run is closed',
      ).toEqual([null]);
    } finally {
      await pg.close();
    }

    const compact = turnjournal('compact', url, '--retention', '1d', '--format', 'json');
    expect(compact.stderr).toBe('');
    expect(compact.status).toBe(0);
    const compacted = JSON.parse(compact.stdout) as {
      sweeps: { dir: string; sessions: { session_id: string; pruned_turn_ids: string[] }[] }[];
      event_logs: { file: string; compacted?: boolean; skipped?: string }[];
    };
    expect(compacted.sweeps.map((s) => [s.dir, s.sessions.map((x) => [x.session_id, x.pruned_turn_ids])])).toEqual([
      ['postgres:cli', [['sess', ['t-done']]]],
    ]);
    expect(compacted.event_logs.map((log) => [log.file, log.skipped])).toEqual([
      ['postgres:cli/chat/events.jsonl', undefined],
    ]);
  });

  it('answers usage errors in one line: no store name, a URL with paths, validate of a URL', () => {
    const bare = turnjournal('check', server.connectionString);
    expect(bare.status).toBe(2);
    expect(bare.stderr).toMatch(/name the store in the URL, e\.g\. postgres:\/\/host\/db\?store=chat/);
    const mixed = turnjournal('audit', urlOf('cli'), repo);
    expect(mixed.status).toBe(2);
    expect(mixed.stderr).toMatch(/a store URL is checked alone/);
    const validate = turnjournal('validate', urlOf('cli'));
    expect(validate.status).toBe(2);
    expect(validate.stderr).toMatch(/validate: reads files/);
  });
});
