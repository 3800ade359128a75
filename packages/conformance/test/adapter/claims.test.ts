import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runAdapter, runConformance } from '../support/internals.js';
import { fakeAdapter, fakeLoop, START } from './support.js';

/** An adapter that claims the turn family and answers every read with nothing at all. */
const emptyReader = fakeAdapter(
  fakeLoop(`(r) => JSON.stringify({ id: r.id, ...(r.op === 'start' ? { ok: true, result: ${START} }
    : r.op === 'read' ? { ok: true, result: { turns: {}, findings: [], runs: {}, event_logs: {} } }
    : r.op === 'stop' ? { ok: true, result: {} }
    : { ok: false, error: { code: 'unsupported', message: 'no' } }) })`),
);

describe('what a run may claim (spec §17.1)', () => {
  it('reports a failing case that covers only SHOULD requirements as a warning, not a failure (TJ-CONF-004)', async () => {
    // framing.json#42 covers only TJ-FRAME-025 and TJ-FRAME-029 (glued-record salvage, SHOULD); framing.json#0 a MUST.
    const report = await runConformance({
      adapter: emptyReader,
      tier: 'reader',
      runs: 0,
      only: ['reader/store/framing.json#42', 'reader/store/framing.json#0'],
      timeoutMs: 10_000,
    });
    const status = Object.fromEntries(report.checks.map((c) => [c.id, c.status]));
    expect(status['reader/store/framing.json#42']).toBe('warning');
    expect(status['reader/store/framing.json#0']).toBe('failed');
    expect(report.ok).toBe(false);
  }, 60_000);

  it('a run that passes only thanks to a baseline entry is not a conformance claim (TJ-CONF-003)', async () => {
    const options = {
      adapter: emptyReader,
      tier: 'reader' as const,
      runs: 0,
      only: ['reader/store/framing.json#0'],
      timeoutMs: 10_000,
    };
    const baselined = await runConformance({
      ...options,
      expectedFailures: { failures: [{ check: 'reader/store/framing.json#0', reason: 'known gap' }] },
    });
    expect(baselined.checks.find((c) => c.id === 'reader/store/framing.json#0')?.status).toBe('expected_failure');
    expect(baselined.ok).toBe(true);
    expect(baselined.conformant).toBe(false);
  }, 60_000);
});

describe('the reference adapter keeps stdout for responses', () => {
  it('writes its diagnostics to stderr and nothing but responses to stdout (TJ-CONF-012, TJ-CONF-013)', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const diagnostics = new PassThrough();
    let stdout = '';
    let stderr = '';
    output.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    diagnostics.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const done = runAdapter(input, output, undefined, diagnostics);
    input.write('this line is not JSON\n');
    input.write(`${JSON.stringify({ id: 1, op: 'stop' })}\n`);
    await done;
    expect(stderr).toContain('ignoring a line that is not JSON');
    expect(
      stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line)),
    ).toEqual([{ id: 1, ok: true, result: {} }]);
  });
});
