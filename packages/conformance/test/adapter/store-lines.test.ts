import { appendFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { featureOf, linesOf, THROUGH_LINES } from '../../src/adapter/runner/writer/store-lines.js';
import { AdapterFailure, AdapterProcess, runConformance } from '../support/internals.js';
import { bin, brokenAdapter } from './support.js';

// Feature `store-lines` (adapter.md §5.8): the reference writer on a record store kept under `<root>/.store-lines/`,
// never at the path the harness names. A harness that read the path would find no file there, so the store-lines
// reference passing the writer tier shows that the harness read back through `lines` (TJ-CONF-053).

const storeAdapter = `node ${bin} adapter --store-lines`;

describe('feature store-lines: the writer tier reads a record store back through `lines`', () => {
  it('the reference writer on a record store passes every check that reads through lines; the checks about files are not applicable, never passed (TJ-CONF-052, TJ-CONF-053)', async () => {
    const report = await runConformance({ adapter: storeAdapter, tier: 'writer', runs: 3, writerRounds: 3 });
    const ran = report.checks.filter((c) => c.id.startsWith('writer/') && c.status !== 'skipped');
    // The checks of features it does not claim (lifecycle, retention) are skipped as unclaimed; every other one runs.
    const claimed = [...THROUGH_LINES].filter((id) => featureOf(id) === undefined);
    expect(ran.map((c) => [c.id, c.status, c.details.slice(0, 2)]).sort()).toEqual(
      claimed.map((id) => [id, 'passed', []]).sort(),
    );
    const skipped = report.checks.filter((c) => c.status === 'skipped');
    const notApplicable = skipped.filter((c) =>
      c.details[0]?.startsWith('not applicable to a store that is not files'),
    );
    for (const id of ['writer/torn-tail', 'writer/fenced', 'writer/fsync-before-ack', 'writer/fault-fdatasync-once'])
      expect(notApplicable.map((c) => c.id)).toContain(id);
    // The store-lines reference claims no other feature: their checks are skipped as unclaimed, so nothing is unproven.
    const others = skipped.filter((c) => !notApplicable.includes(c));
    expect(others.filter((c) => !/not claimed|does not claim the reader level/.test(c.details[0] ?? ''))).toEqual([]);
    expect(report.not_proven).toEqual([]);
    expect(report.conformant).toBe(true);
  }, 180_000);

  it('the lifecycle and compaction checks plant and read back through the adapter: a writer whose journals are away from the paths named passes them (TJ-CONF-053)', async () => {
    // The reference file adapter with every journal relocated below `<root>/.relocated/`: a check that read or planted
    // the path it names would find nothing there, or plant a log the writer never sees, and fail.
    const report = await runConformance({
      adapter: brokenAdapter('store-lines-relocated'),
      tier: 'writer',
      runs: 2,
      writerRounds: 2,
      only: [...THROUGH_LINES, 'writer/event-seq', 'writer/turn-submit-invalid-session', 'writer/sweep'],
    });
    const status = Object.fromEntries(report.checks.map((c) => [c.id, c.status]));
    for (const id of THROUGH_LINES) expect([id, status[id]]).toEqual([id, 'passed']);
    expect(report.checks.find((c) => c.id === 'writer/event-seq')?.details[0]).toMatch(/^not applicable/);
    expect(report.not_proven).toEqual(['writer/turn-submit-invalid-session', 'writer/sweep']);
  }, 180_000);

  it('a reader of the store that leaves out the last line fails the ack oracle (TJ-STORE-002, TJ-CONF-052)', async () => {
    const report = await runConformance({
      adapter: brokenAdapter('store-lines-drops-last'),
      tier: 'writer',
      runs: 2,
      writerRounds: 2,
      only: ['writer/ack-oracle'],
    });
    const oracle = report.checks.find((c) => c.id === 'writer/ack-oracle');
    expect(oracle?.status).toBe('failed');
    expect(oracle?.details.join('\n')).toMatch(/acknowledged records lost/);
  }, 120_000);

  it('a claim of store-lines that still reads files is not proven for the features it claims (TJ-CONF-053)', async () => {
    // The reference file adapter with store-lines added to its claim: every lifecycle, recovery, retention and live
    // check reads files at paths, so none may pass for a store that is not files.
    const ids = ['writer/turn-submit-invalid-session', 'writer/recover', 'writer/sweep', 'writer/live-turn-flow'];
    const report = await runConformance({
      adapter: brokenAdapter('claims-store-lines'),
      tier: 'writer',
      runs: 1,
      writerRounds: 1,
      only: ids,
    });
    const checks = report.checks.filter((c) => ids.includes(c.id));
    expect(checks.map((c) => [c.id, c.status])).toEqual(ids.map((id) => [id, 'skipped']));
    expect(report.not_proven).toEqual(ids);
    expect(report.conformant).toBe(false);
  }, 120_000);

  it('`lines` answers each committed line as base64 of its exact bytes, invalid UTF-8 included, and no uncommitted tail (TJ-CONF-052)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'tj-store-lines-'));
    const file = join(root, '_turn_journal', 's1.jsonl');
    const adapter = AdapterProcess.spawn(storeAdapter, { timeoutMs: 30_000 });
    try {
      await adapter.request('start', { protocol: 1 });
      expect(await adapter.request('lines', { file })).toEqual({ lines: [] });
      const { handle } = (await adapter.request('open', { file, durability: 'every' })) as { handle: string };
      const record = { version: 1, event: 'submitted', turn_id: 't1', session_id: 's1', created_at: 1, content: 'é' };
      await adapter.request('append', { handle, record });
      await adapter.request('close', { handle });
      // Nothing at the path named: the journal is in the store's own place.
      expect(existsSync(file)).toBe(false);
      // A damaged line (invalid UTF-8) and a torn tail, written into the store's file behind the writer's back.
      const privateFile = join(root, '.store-lines', '_turn_journal', 's1.jsonl');
      appendFileSync(privateFile, Buffer.from([0xff, 0xfe, 0x7b, 0x0a, 0x7b, 0x22]));
      const { lines } = (await adapter.request('lines', { file })) as { lines: string[] };
      expect(linesOf({ lines })).toEqual([Buffer.from(JSON.stringify(record)), Buffer.from([0xff, 0xfe, 0x7b])]);
    } finally {
      await adapter.dispose();
      rmSync(root, { recursive: true, force: true });
    }
  }, 60_000);

  it('an adapter that does not claim store-lines answers `lines` unsupported (TJ-CONF-022)', async () => {
    const adapter = AdapterProcess.spawn(`node ${bin} adapter`, { timeoutMs: 30_000 });
    try {
      await adapter.request('start', { protocol: 1 });
      const failure = await adapter.request('lines', { file: '/tmp/x/_turn_journal/s1.jsonl' }).then(
        () => null,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(AdapterFailure);
      expect((failure as AdapterFailure).code).toBe('unsupported');
    } finally {
      await adapter.dispose();
    }
  }, 60_000);
});
