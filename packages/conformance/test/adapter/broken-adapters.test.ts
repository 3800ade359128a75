import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runConformance, straceAvailable } from '../support/internals.js';
import { brokenAdapter } from './support.js';

// The proof of power: the reference adapter with one defect each must FAIL the kit, and the failures must name the
// requirement the defect breaks. Each run is narrowed (`only`) to the checks that matter, to keep the suite fast.
const DEFECTS: readonly {
  defect: string;
  only: string[];
  tier: 'reader' | 'writer';
  /** At least one of these ids must be among the failed checks' requirements. */
  ids: string[];
  needsStrace?: boolean;
}[] = [
  {
    defect: 'no-fsync',
    tier: 'writer',
    only: ['writer/fsync-before-ack'],
    ids: ['TJ-CONF-014', 'TJ-DUR-003'],
    needsStrace: true,
  },
  // Acknowledging before the write loses a record only when a kill lands in the gap (timing, rare on a loaded
  // machine); the strace check sees the acknowledgement leave before the file's fdatasync every time.
  {
    defect: 'ack-before-write',
    tier: 'writer',
    only: ['writer/ack-oracle', 'writer/fsync-before-ack'],
    ids: ['TJ-CONF-009', 'TJ-CONF-014', 'TJ-DUR-003'],
  },
  // Rewriting the file per append loses acknowledged records only when the kill lands mid-rewrite (timing); it
  // takes no lock either, which the lock check sees every time.
  {
    defect: 'rewrite-per-append',
    tier: 'writer',
    only: ['writer/ack-oracle', 'writer/lock'],
    ids: ['TJ-CONF-009', 'TJ-DUR-018'],
  },
  { defect: 'no-repair', tier: 'writer', only: ['writer/torn-tail'], ids: ['TJ-DUR-004', 'TJ-DUR-005'] },
  { defect: 'append-after-space', tier: 'writer', only: ['writer/preallocated-space'], ids: ['TJ-DUR-033'] },
  {
    defect: 'reject-unknown-fields',
    tier: 'reader',
    only: ['reader/store/derivation.json', 'reader/store/basics.json'],
    ids: ['TJ-COMPAT-002', 'TJ-DERIVE-005'],
  },
  {
    defect: 'stop-at-first-bad-line',
    tier: 'reader',
    only: ['reader/store/framing.json'],
    ids: ['TJ-FRAME-016', 'TJ-FRAME-017'],
  },
  { defect: 'split-u2028', tier: 'reader', only: ['reader/store/framing.json'], ids: ['TJ-FRAME-002'] },
  {
    defect: 'event-prefix-ignored',
    tier: 'reader',
    only: ['reader/store/event-log-modes.json'],
    ids: ['TJ-EVENT-031'],
  },
  {
    defect: 'prefix-trusts-checkpoint',
    tier: 'reader',
    only: ['reader/store/event-log-modes.json'],
    ids: ['TJ-EVENT-032'],
  },
  {
    defect: 'space-as-torn-tail',
    tier: 'reader',
    only: ['reader/store/preallocated-space.json'],
    ids: ['TJ-FRAME-036'],
  },
  {
    defect: 'nuls-hide-torn-tail',
    tier: 'reader',
    only: ['reader/store/preallocated-space.json'],
    ids: ['TJ-FRAME-030'],
  },
  // Writer mutants of issue 12: each new writer check catches the defect it exists for.
  { defect: 'no-dir-fsync', tier: 'writer', only: ['writer/durable-open'], ids: ['TJ-DUR-007'], needsStrace: true },
  { defect: 'no-close-fsync', tier: 'writer', only: ['writer/none-close'], ids: ['TJ-DUR-015'], needsStrace: true },
  { defect: 'short-quarantine', tier: 'writer', only: ['writer/quarantine'], ids: ['TJ-DUR-005'] },
  { defect: 'drop-damaged-lines', tier: 'writer', only: ['writer/mid-file-damage'], ids: ['TJ-DUR-005'] },
  { defect: 'pid-only-liveness', tier: 'writer', only: ['writer/foreign-host-lock'], ids: ['TJ-DUR-020'] },
  { defect: 'no-takeover', tier: 'writer', only: ['writer/dead-holder-lock'], ids: ['TJ-DUR-019'] },
  { defect: 'zombie-alive', tier: 'writer', only: ['writer/zombie-holder-lock'], ids: ['TJ-DUR-019'] },
  { defect: 'racy-takeover', tier: 'writer', only: ['writer/race'], ids: ['TJ-DUR-025'] },
  { defect: 'steal-lock', tier: 'writer', only: ['writer/lock', 'writer/race'], ids: ['TJ-DUR-017'] },
  { defect: 'unlink-any-lock', tier: 'writer', only: ['writer/lock-replaced'], ids: ['TJ-DUR-026'] },
  { defect: 'sorted-members', tier: 'writer', only: ['writer/byte-exact'], ids: ['TJ-FRAME-005'] },
  { defect: 'spaced-json', tier: 'writer', only: ['writer/byte-exact'], ids: ['TJ-FRAME-005'] },
  { defect: 'bom', tier: 'writer', only: ['writer/byte-exact'], ids: ['TJ-FRAME-008'] },
  { defect: 'accept-invalid', tier: 'writer', only: ['writer/invalid-record'], ids: ['TJ-COMPAT-018'] },
  {
    defect: 'no-poison',
    tier: 'writer',
    only: ['writer/fault-fdatasync-eio'],
    ids: ['TJ-DUR-021'],
    needsStrace: true,
  },
  {
    defect: 'sync-retry-ack',
    tier: 'writer',
    only: ['writer/fault-fdatasync-once'],
    ids: ['TJ-DUR-021'],
    needsStrace: true,
  },
  {
    defect: 'ignore-write-error',
    tier: 'writer',
    only: ['writer/fault-write'],
    ids: ['TJ-DUR-030'],
    needsStrace: true,
  },
  {
    defect: 'ignore-line-limit',
    tier: 'reader',
    only: ['reader/store/limits-and-versions.json'],
    ids: ['TJ-CONF-031', 'TJ-FRAME-031'],
  },
  {
    defect: 'status-decides-outcome',
    tier: 'reader',
    only: ['reader/store/limits-and-versions.json'],
    ids: ['TJ-RUNSEM-001'],
  },
  {
    defect: 'silent-json-sidecar',
    tier: 'reader',
    only: ['reader/store/limits-and-versions.json'],
    ids: ['TJ-FAM-008'],
  },
  {
    defect: 'silent-other-version',
    tier: 'reader',
    only: ['reader/store/limits-and-versions.json'],
    ids: ['TJ-COMPAT-011', 'TJ-COMPAT-012'],
  },
  { defect: 'timestamp-order', tier: 'reader', only: ['reader/store/derivation.json'], ids: ['TJ-DERIVE-003'] },
  { defect: 'terminal-not-sticky', tier: 'reader', only: ['reader/store/derivation.json'], ids: ['TJ-DERIVE-008'] },
];

describe.concurrent('broken adapters fail the conformance kit', () => {
  for (const { defect, only, tier, ids, needsStrace } of DEFECTS) {
    it.skipIf(needsStrace === true && !straceAvailable())(
      `${defect} fails with one of ${ids.join(', ')}`,
      async () => {
        const report = await runConformance({ adapter: brokenAdapter(defect), tier, runs: 2, writerRounds: 2, only });
        const failed = report.checks.filter((c) => c.status === 'failed');
        const named = new Set(failed.flatMap((c) => c.requirements));
        expect(report.ok, `${defect} passed the kit`).toBe(false);
        expect(report.conformant).toBe(false);
        expect(
          ids.some((id) => named.has(id)),
          `${defect}: failures name ${[...named].join(', ')}`,
        ).toBe(true);
      },
      120_000,
    );
  }
});

describe('what the kit does with a failure and with a partial claim', () => {
  it('a failing generated case prints its seed and a shrunk counterexample saved as a fixture case (TJ-CONF-010)', async () => {
    // Two runs with one seed at once, as parallel CI jobs would: each keeps its own counterexample file.
    const options = {
      adapter: brokenAdapter('split-u2028'),
      tier: 'reader',
      runs: 8,
      only: ['reader/generated'],
    } as const;
    const [report, twin] = await Promise.all([runConformance(options), runConformance(options)]);
    const failed = report.checks.filter((c) => c.status === 'failed');
    expect(failed.length).toBeGreaterThan(0);
    const details = (failed[0]?.details ?? []).join('\n');
    expect(details).toMatch(/seed \d+ \(run seed 20260511, case \d+\); shrunk counterexample written to (\S+\.json)/);
    const path = /written to (\S+\.json)/.exec(details)?.[1] as string;
    const saved = JSON.parse(readFileSync(path, 'utf8')) as { files: { text: string }[]; requirements: string[] };
    expect(saved.requirements).toContain('TJ-FRAME-002');
    // Shrinking keeps the line that matters: a raw U+2028 or U+2029.
    expect(saved.files.some((f) => /[\u2028\u2029]/.test(f.text))).toBe(true);
    const twinDetails = (twin.checks.find((c) => c.id === failed[0]?.id)?.details ?? []).join('\n');
    const twinPath = /written to (\S+\.json)/.exec(twinDetails)?.[1];
    expect(twinPath).toMatch(/tj-conformance-counterexample-\d+-[^/]+\/counterexample\.json$/);
    expect(twinPath).not.toBe(path);
    expect(readFileSync(path, 'utf8')).toBe(readFileSync(twinPath as string, 'utf8'));
  }, 120_000);

  it('an adapter claiming only the event family passes the writer tier on an event log (TJ-CONF-002, TJ-CONF-009)', async () => {
    const report = await runConformance({
      adapter: brokenAdapter('claim-event-only'),
      tier: 'writer',
      runs: 2,
      writerRounds: 2,
      only: ['writer/ack-oracle', 'writer/restart', 'writer/torn-tail'],
    });
    expect(report.checks.filter((c) => c.status !== 'passed')).toEqual([]);
    expect(report.adapter.families).toEqual(['event']);
  }, 120_000);

  it('hand-written lifecycle writers that skip no rule pass every lifecycle check, so the defects built on them fail for their one skipped rule (TJ-CONF-032)', async () => {
    const only = [
      'writer/turn-submit-idempotent',
      'writer/turn-transitions',
      'writer/event-seq',
      'writer/event-runs',
      'writer/turn-unreadable-shard',
      'writer/event-checkpoints',
      'writer/event-run-index',
      'writer/event-epoch',
      'writer/event-split-checkpoint',
      'writer/run-steps',
      'writer/state-replace',
      'writer/durable-directories',
    ];
    const report = await runConformance({
      adapter: brokenAdapter('lifecycle-handwritten'),
      tier: 'writer',
      runs: 1,
      writerRounds: 1,
      only,
    });
    expect(report.checks.filter((c) => only.includes(c.id)).map((c) => [c.id, c.status])).toEqual(
      only.map((id) => [id, 'passed']),
    );
  }, 120_000);

  it('a hand-written startup recovery that breaks no rule passes writer/recover, so the defects built on it fail for their one broken rule (TJ-CONF-033)', async () => {
    const report = await runConformance({
      adapter: brokenAdapter('recovery-handwritten'),
      tier: 'writer',
      runs: 1,
      writerRounds: 1,
      only: ['writer/recover', 'writer/recover-durable'],
    });
    expect(report.checks.find((c) => c.id === 'writer/recover')?.status).toBe('passed');
    expect(report.checks.find((c) => c.id === 'writer/recover-durable')?.status).toBe('passed');
  }, 120_000);

  it('a hand-written sweep and compaction that break no rule pass writer/sweep and writer/compact, so the defects built on them fail for their one broken rule (TJ-CONF-034, TJ-CONF-035)', async () => {
    const report = await runConformance({
      adapter: brokenAdapter('retention-handwritten'),
      tier: 'writer',
      runs: 1,
      writerRounds: 1,
      only: ['writer/sweep', 'writer/compact', 'writer/sweep-rewrite', 'writer/sweep-recheck'],
    });
    expect(
      report.checks
        .filter((c) => c.id.startsWith('writer/sweep') || c.id === 'writer/compact')
        .map((c) => [c.id, c.status]),
    ).toEqual([
      ['writer/sweep', 'passed'],
      ['writer/compact', 'passed'],
      ['writer/sweep-rewrite', 'passed'],
      ['writer/sweep-recheck', 'passed'],
    ]);
  }, 120_000);

  it('hand-written live sessions that break no rule pass every live check, so the defects built on them fail for their one broken rule (TJ-CONF-040, TJ-CONF-041, TJ-CONF-042, TJ-CONF-043, TJ-LIVE-012, TJ-CONF-072, TJ-CONF-073, TJ-CONF-074)', async () => {
    const only = [
      'writer/live-turn-flow',
      'writer/live-subscribe',
      'writer/live-catch-up',
      'writer/live-epoch',
      'writer/live-burst',
      'writer/live-snapshot-ack',
      'writer/live-restart',
      'writer/live-restart-long',
      'writer/live-restart-checkpoint',
      'writer/live-durable',
      'writer/live-invalid-session',
      'writer/live-ack-receipts',
      'writer/live-cancel',
      'writer/live-system-message',
      'writer/live-snapshot-tools',
      'writer/live-tokens-durable',
      'writer/live-tokens-segments',
      'writer/live-tokens-session',
      'writer/live-shutdown',
      'writer/live-session-bound',
      'writer/live-window-checkpoints',
    ];
    const report = await runConformance({
      adapter: brokenAdapter('live-handwritten'),
      tier: 'writer',
      runs: 1,
      writerRounds: 1,
      only: ['writer/live'],
    });
    expect(report.checks.filter((c) => c.id.startsWith('writer/live')).map((c) => [c.id, c.status])).toEqual(
      only.map((id) => [id, 'passed']),
    );
  }, 120_000);

  it('live sessions that give no session token mode segments answer unsupported: the checks that need it are skipped naming the mode, never passed (TJ-CONF-071)', async () => {
    const report = await runConformance({
      adapter: brokenAdapter('live-durable-only'),
      tier: 'writer',
      runs: 1,
      writerRounds: 1,
      only: ['writer/live-tokens'],
    });
    expect(
      report.checks
        .filter((c) => c.id.startsWith('writer/'))
        .map((c) => [c.id, c.status, c.status === 'skipped' && /segments/.test(c.details.join(' '))]),
    ).toEqual([
      ['writer/live-tokens-durable', 'passed', false],
      ['writer/live-tokens-segments', 'skipped', true],
      ['writer/live-tokens-session', 'skipped', true],
    ]);
  }, 120_000);

  it('live sessions whose fixed bounds are more than the kit fills are skipped naming the bound, never passed (TJ-CONF-073, TJ-CONF-074)', async () => {
    const report = await runConformance({
      adapter: brokenAdapter('live-fixed-bounds'),
      tier: 'writer',
      runs: 1,
      writerRounds: 1,
      only: ['writer/live-session-bound', 'writer/live-window-checkpoints'],
    });
    expect(
      report.checks.filter((c) => c.id.startsWith('writer/')).map((c) => [c.id, c.status, c.details.join(' ')]),
    ).toEqual([
      [
        'writer/live-session-bound',
        'skipped',
        expect.stringContaining('the adapter holds up to 1000 sessions open (asked for 2)'),
      ],
      [
        'writer/live-window-checkpoints',
        'skipped',
        expect.stringContaining("the adapter's window is 67108864 bytes (asked for 65536)"),
      ],
    ]);
  }, 120_000);

  it('live sessions that state no client_id_max fail writer/live-ack-receipts, saying the bound must be stated (TJ-CONF-070, TJ-LIVE-057)', async () => {
    const report = await runConformance({
      adapter: brokenAdapter('live-client-id-bound-unstated'),
      tier: 'writer',
      runs: 1,
      writerRounds: 1,
      only: ['writer/live-ack-receipts'],
    });
    const check = report.checks.find((c) => c.id === 'writer/live-ack-receipts');
    expect(check?.status).toBe('failed');
    expect(check?.details.join('\n')).toContain('states no client_id_max');
  }, 120_000);

  it('a writer that writes U+2028 raw gets a warning, not a failure: TJ-FRAME-007 is a SHOULD (TJ-CONF-004)', async () => {
    const report = await runConformance({
      adapter: brokenAdapter('raw-separators'),
      tier: 'writer',
      runs: 1,
      writerRounds: 1,
      only: ['writer/escape-separators', 'writer/byte-exact'],
    });
    expect(report.checks.find((c) => c.id === 'writer/escape-separators')?.status).toBe('warning');
    expect(report.checks.find((c) => c.id === 'writer/byte-exact')?.status).toBe('passed');
  }, 120_000);
});
