import { describe, expect, it } from 'vitest';
import { runConformance } from '../../../src/index.js';
import { fakeAdapter, fakeLoop, START } from '../support.js';

/** An adapter whose `start` fails. */
const noStart = fakeAdapter(
  fakeLoop(`(r) => JSON.stringify({ id: r.id, ok: false, error: { code: 'failed', message: 'cannot start' } })`),
);
/** A reader that answers every read with nothing at all. */
const emptyReader = fakeAdapter(
  fakeLoop(`(r) => JSON.stringify({ id: r.id, ...(r.op === 'start' ? { ok: true, result: ${START} }
    : r.op === 'read' ? { ok: true, result: { turns: {}, findings: [], runs: {}, event_logs: {} } }
    : r.op === 'stop' ? { ok: true, result: {} }
    : { ok: false, error: { code: 'unsupported', message: 'no' } }) })`),
);

describe('the baseline in a real run (TJ-CONF-017)', () => {
  it('a failed start is reported as such, not as every baseline entry stale', async () => {
    const report = await runConformance({
      adapter: noStart,
      runs: 0,
      timeoutMs: 10_000,
      expectedFailures: {
        failures: [
          { check: 'writer/lock', reason: 'no locking yet' },
          { check: 'reader/store/framing.json#0', reason: 'known' },
        ],
      },
    });
    expect(report.checks.map((c) => [c.id, c.status])).toEqual([['adapter/start', 'failed']]);
    expect(report.checks[0]?.details.join(' ')).toContain('cannot start');
    expect(report.summary.stale_expected_failure).toBe(0);
    expect(report.ok).toBe(false);
  }, 60_000);

  it('a baseline entry for a check --only did not select is not stale', async () => {
    const report = await runConformance({
      adapter: emptyReader,
      tier: 'reader',
      runs: 0,
      only: ['reader/store/framing.json#42'],
      timeoutMs: 10_000,
      expectedFailures: { failures: [{ check: 'reader/store/framing.json#0', reason: 'known gap' }] },
    });
    expect(report.summary.stale_expected_failure).toBe(0);
    expect(report.checks.map((c) => c.id)).not.toContain('reader/store/framing.json#0');
  }, 60_000);
});
