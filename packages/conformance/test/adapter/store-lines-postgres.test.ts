import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type PostgresServer, startPostgres } from '@turnjournal/test-support/postgres-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { featureOf, THROUGH_LINES as THROUGH_LINES_OF_ANY_CLAIM } from '../../src/adapter/runner/writer/store-lines.js';
import { AdapterFailure, AdapterProcess, runConformance } from '../support/internals.js';
import { bin, brokenAdapter } from './support.js';

// The writer tier on the reference adapter whose private store is a PostgreSQL database (feature `store-lines`,
// adapter.md §5.8, `turnjournal adapter --store-lines=postgres://…`): kill rounds whose killed adapter's advisory lock
// the database frees, lock races decided by the database, the ack oracle read back through `lines` from the rows.
// The server is a throwaway one this file starts itself; the run takes about a minute on two busy cores.

let server: PostgresServer;
beforeAll(() => {
  server = startPostgres();
});
afterAll(() => server?.stop());

const adapterOn = (url: string) => `node ${bin} adapter --store-lines=${url}`;

/**
 * The checks that run through `lines` (adapter.md §5.8) of an adapter claiming no feature besides store-lines; every
 * other writer check is skipped with its reason.
 */
const THROUGH_LINES = [...THROUGH_LINES_OF_ANY_CLAIM].filter((id) => featureOf(id) === undefined);

/** One SQL statement's rows as text, through psql on the server's socket. */
function psql(sql: string): string[] {
  const psqlBin = join(
    '/usr/lib/postgresql',
    readdirSync('/usr/lib/postgresql')
      .filter((name) => /^\d+$/.test(name))
      .sort((a, b) => Number(b) - Number(a))[0] as string,
    'bin/psql',
  );
  const run = spawnSync(psqlBin, ['-h', server.socketDir, '-U', server.user, '-d', 'postgres', '-XAtq', '-c', sql], {
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`psql failed: ${run.stderr}`);
  return run.stdout.split('\n').filter((line) => line !== '');
}

describe('feature store-lines on PostgreSQL: the writer tier through the database', () => {
  it('the reference writer on PostgreSQL passes every check that reads through lines; the checks about files are not applicable, never passed (TJ-CONF-052, TJ-CONF-053, TJ-STORE-001, TJ-STORE-003)', async () => {
    const report = await runConformance({
      adapter: adapterOn(server.connectionString),
      tier: 'writer',
      runs: 4,
      writerRounds: 4,
    });
    const ran = report.checks.filter((c) => c.id.startsWith('writer/') && c.status !== 'skipped');
    expect(ran.map((c) => [c.id, c.status, c.details.slice(0, 2)]).sort()).toEqual(
      THROUGH_LINES.map((id) => [id, 'passed', []]).sort(),
    );
    const skipped = report.checks.filter((c) => c.status === 'skipped');
    for (const check of skipped)
      expect(check.details[0]).toMatch(/^not applicable to a store that is not files|not claimed|reader level/);
    // The fault checks inject faults into system calls on a journal file: a database has none to fault.
    const notApplicable = skipped.filter((c) => c.details[0]?.startsWith('not applicable')).map((c) => c.id);
    for (const id of ['writer/fenced', 'writer/fault-fdatasync-eio', 'writer/fault-write-enospc', 'writer/torn-tail'])
      expect(notApplicable).toContain(id);
    expect(report.not_proven).toEqual([]);
    expect(report.conformant).toBe(true);
    expect(report.adapter?.name).toBe('@turnjournal/reference (store-lines on postgres)');
    // The journals are rows of the database, one store per harness root: the race alone used a hundred roots.
    const [stores, lines] = psql(
      `SELECT (SELECT count(DISTINCT store) FROM turnjournal_streams WHERE store LIKE 'tj-%'),
              (SELECT count(*) FROM turnjournal_lines WHERE store LIKE 'tj-%')`,
    )
      .join('')
      .split('|');
    expect(Number(stores)).toBeGreaterThan(100);
    expect(Number(lines)).toBeGreaterThan(100);
    // Every adapter process is gone, and its sessions with it: none is left but this query's (the server ends a
    // closed connection's session a moment after the process exits).
    let sessions: string[] = [];
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
      sessions = psql("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'");
      if (sessions[0] === '1') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(sessions).toEqual(['1']);
  }, 600_000);

  it('a killed owner’s lock is freed by the database: the next adapter opens the journal and finds every acknowledged line (TJ-CONF-026, TJ-STORE-001)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'tj-store-lines-pg-'));
    const file = join(root, '_turn_journal', 's1.jsonl');
    const url = server.connectionString;
    const first = AdapterProcess.spawn(adapterOn(url), { timeoutMs: 30_000 });
    const second = AdapterProcess.spawn(adapterOn(url), { timeoutMs: 30_000 });
    try {
      await first.request('start', { protocol: 1 });
      await second.request('start', { protocol: 1 });
      const { handle } = (await first.request('open', { file, durability: 'every' })) as { handle: string };
      const record = { version: 1, event: 'submitted', turn_id: 't1', session_id: 's1', created_at: 1, content: 'é' };
      await first.request('append', { handle, record });
      const refused = await second.request('open', { file, durability: 'every' }).then(
        () => null,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(AdapterFailure);
      expect((refused as AdapterFailure).code).toBe('journal_locked');
      await first.kill();
      // The server ends the killed adapter's session when its socket closes, and its advisory lock with it.
      let reopened: { handle: string } | undefined;
      for (const deadline = Date.now() + 10_000; reopened === undefined; ) {
        try {
          reopened = (await second.request('open', { file, durability: 'every' })) as { handle: string };
        } catch (error) {
          if (!(error instanceof AdapterFailure && error.code === 'journal_locked') || Date.now() > deadline)
            throw error;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
      await second.request('append', { handle: reopened.handle, record: { ...record, turn_id: 't2' } });
      const { lines } = (await second.request('lines', { file })) as { lines: string[] };
      expect(lines.map((line) => JSON.parse(Buffer.from(line, 'base64').toString('utf8')).turn_id)).toEqual([
        't1',
        't2',
      ]);
      await second.request('close', { handle: reopened.handle });
      expect(await second.stop()).toBe(0);
    } finally {
      await first.dispose();
      await second.dispose();
      rmSync(root, { recursive: true, force: true });
    }
  }, 60_000);

  it('a PostgreSQL binding that acknowledges before the commit fails the ack oracle; the same binding unbroken passes it (TJ-STORE-022)', async () => {
    const verdicts: Record<string, string | undefined> = {};
    for (const [defect, rounds] of [
      ['store-pg', 3],
      ['store-pg-ack-before-commit', 5],
    ] as const) {
      const report = await runConformance({
        adapter: `TJ_MUTANT_POSTGRES_URL=${server.connectionString} ${brokenAdapter(defect)}`,
        tier: 'writer',
        runs: rounds,
        writerRounds: rounds,
        only: ['writer/ack-oracle'],
      });
      const oracle = report.checks.find((c) => c.id === 'writer/ack-oracle');
      const lost = oracle?.details.some((d) => d.includes('acknowledged records lost')) === true;
      verdicts[defect] = `${oracle?.status}${lost ? ' (acknowledged records lost)' : ''}`;
    }
    expect(verdicts).toEqual({
      'store-pg': 'passed',
      'store-pg-ack-before-commit': 'failed (acknowledged records lost)',
    });
  }, 300_000);

  it('a database it cannot reach fails each request with the connection error, and the adapter still exits 0 at the end of its input', () => {
    const file = '/tmp/tj-unreachable/_turn_journal/s1.jsonl';
    const requests = [
      { id: 1, op: 'start', protocol: 1 },
      { id: 2, op: 'open', file, durability: 'every' },
      { id: 3, op: 'lines', file },
      { id: 4, op: 'stop' },
    ];
    // Port 1 of the loopback refuses at once. The input ends while the requests are in flight.
    const run = spawnSync(process.execPath, [bin, 'adapter', '--store-lines=postgres://nobody@127.0.0.1:1/db'], {
      encoding: 'utf8',
      input: requests.map((r) => `${JSON.stringify(r)}\n`).join(''),
      timeout: 30_000,
    });
    const answers = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: number; ok: boolean; error?: { code: string; message: string } });
    expect(answers.map((a) => [a.id, a.ok, a.error?.code, a.error?.message])).toEqual([
      [1, true, undefined, undefined],
      [2, false, 'failed', 'connect ECONNREFUSED 127.0.0.1:1'],
      [3, false, 'failed', 'connect ECONNREFUSED 127.0.0.1:1'],
      [4, true, undefined, undefined],
    ]);
    expect(run.status).toBe(0);
  });

  it('refuses a URL that names a store, and a target that is no database URL, in one line (exit 2)', () => {
    for (const [value, message] of [
      [`${server.connectionString}?store=x`, /names one store per harness root itself/],
      ['/tmp/somewhere', /takes a postgres:\/\/ URL/],
    ] as const) {
      const run = spawnSync(process.execPath, [bin, 'adapter', `--store-lines=${value}`], {
        encoding: 'utf8',
        input: '',
      });
      expect(run.status).toBe(2);
      expect(run.stderr).toMatch(message);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
    }
  });
});
