// The `turnjournal` CLI on a PostgreSQL store (spec §19.1): `check`, `audit`, `recover` and `compact` take a
// `postgres://…?store=<name>` URL and reach the database through the record-store seam, as they reach files through
// the file store — from a real server this file starts.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { auditStore } from '@turnjournal/reader';
import { type PostgresServer, startPostgres } from '@turnjournal/test-support/postgres-server';
import { openEventLog, openTurnJournal } from '@turnjournal/writer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresRecordStore } from '../src/index.js';

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
  it('asks for `pg migrate` in one line before the tables exist', () => {
    const early = turnjournal('check', urlOf('cli'));
    expect(early.status).toBe(1);
    expect(early.stderr).toMatch(
      /^turnjournal: the database has no turnjournal tables .*: run `turnjournal pg migrate <url>` first\n$/,
    );
  });

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

  it("TJ-STORE-026: compact ages a store's turns by the database's clock, not by the machine's, 30 days ahead", async () => {
    const pg = openPostgresRecordStore({ connectionString: server.connectionString, store: 'skewed' });
    try {
      await pg.setup();
      const hourAgo = () => pg.clock() - 3_600_000;
      const turns = await openTurnJournal({ store: pg, sessionId: 'sess', shard: 'host-a', clock: hourAgo });
      await turns.submit({ content: 'answered an hour ago', turnId: 't-recent' });
      await turns.complete('t-recent');
      await turns.close();
    } finally {
      await pg.close();
    }
    // The CLI's process believes it is 30 days later: by its own clock the turn is far past a one-day window.
    const ahead = `data:text/javascript,const now=Date.now.bind(Date);Date.now=()=>now()+${30 * DAY}`;
    const result = spawnSync(
      process.execPath,
      ['--import', ahead, bin, 'compact', urlOf('skewed'), '--retention', '1d', '--format', 'json'],
      {
        encoding: 'utf8',
        timeout: 120_000,
      },
    );
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const compacted = JSON.parse(result.stdout) as {
      sweeps: { sessions: { session_id: string; pruned_turn_ids: string[] }[] }[];
    };
    expect(compacted.sweeps.flatMap((sweep) => sweep.sessions.flatMap((one) => one.pruned_turn_ids))).toEqual([]);
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

  it('pg migrate creates the tables once and says their schema version; a second run changes nothing', () => {
    for (let run = 0; run < 2; run++) {
      const migrate = turnjournal('pg', 'migrate', server.connectionString);
      expect(migrate.stderr).toBe('');
      expect(migrate.status).toBe(0);
      expect(migrate.stdout).toMatch(/are at schema version 1\n$/);
    }
  });

  it('export and import copy a store byte for byte both ways, and refuse what they cannot copy whole', async () => {
    // The repository's example store: damaged lines, a torn tail, shards, a run file and a state document.
    const example = join(repo, 'examples/store');
    const imported = turnjournal('import', example, urlOf('example'));
    expect(imported.stderr).toBe('');
    expect(imported.status).toBe(0);
    expect(imported.stdout).toMatch(/^imported 4 journal\(s\) and 1 document\(s\), \d+ bytes, from .* to postgres/);
    const out = mkdtempSync(join(tmpdir(), 'tj-export-'));
    const exported = turnjournal('export', urlOf('example'), out);
    expect(exported.status).toBe(0);
    const files = (dir: string) =>
      (readdirSync(dir, { recursive: true, withFileTypes: true }) as import('node:fs').Dirent[])
        .filter((entry) => entry.isFile() && /\.jsonl?$/.test(entry.name))
        .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
        .sort();
    expect(files(out)).toEqual(files(example));
    for (const file of files(example)) {
      const original = readFileSync(join(example, file));
      // A journal's committed lines go, byte for byte; a torn tail (no LF yet) is not a committed line and stays.
      const committed = file.endsWith('.json') ? original : original.subarray(0, original.lastIndexOf(0x0a) + 1);
      expect(readFileSync(join(out, file)).equals(committed), file).toBe(true);
    }
    // The reports of the database and of its export agree, names apart.
    const reportOf = (target: string) => {
      const run = turnjournal('check', target, '--format', 'json');
      const report = JSON.parse(run.stdout) as { summary: unknown; sessions: unknown };
      return { status: run.status, summary: report.summary, sessions: report.sessions };
    };
    const fromDatabase = JSON.stringify(reportOf(urlOf('example'))).replaceAll('postgres:example/', '');
    expect(JSON.parse(fromDatabase)).toEqual(JSON.parse(JSON.stringify(reportOf(out)).replaceAll(`${out}/`, '')));

    const again = turnjournal('import', example, urlOf('example'));
    expect(again.status).not.toBe(0);
    expect(again.stderr).toMatch(/already holds 5 of the locations to copy/);
    const full = turnjournal('export', urlOf('example'), out);
    expect(full.status).toBe(2);
    expect(full.stderr).toMatch(/is not empty/);
    writeFileSync(join(out, 'notes.jsonl'), '{"a":1}\n');
    const stray = turnjournal('import', out, urlOf('elsewhere'));
    expect(stray.status).toBe(2);
    expect(stray.stderr).toMatch(/outside the store layout .*notes\.jsonl/);
  });
});
