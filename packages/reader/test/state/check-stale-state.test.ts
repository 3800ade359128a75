import type { SessionState } from '@turnjournal/schema';
import { describe, expect, it } from 'vitest';
import type { LlmCall } from '../../src/run/fold-run.js';
import { checkStaleState } from '../../src/state/check-stale-state.js';

const state: SessionState = {
  schema_version: 1,
  session_id: 's1',
  updated_at: '2026-02-03T12:00:02.900Z',
  run_id: 'run-1',
  invoke_seq: 4,
  messages: [],
};
const request = { type: 'llm.request' as const, run_id: 'run-1', ts: 't', input: { messages: [] } };
const call = (seq: number, withRequest = true): LlmCall =>
  withRequest ? { seq, request: { ...request, seq } } : { seq };
const run = (runId: string, ...calls: LlmCall[]) => ({ runId, llmCalls: calls });

describe('checkStaleState (TJ-STATE-006)', () => {
  it('reports a snapshot behind a request of the run it names, by seq', () => {
    const findings = checkStaleState(state, [run('run-1', call(3), call(5))], { file: 'state/s1.json' });
    expect(findings).toMatchObject([
      { code: 'stale_state', severity: 'warn', file: 'state/s1.json', session_id: 's1', run_id: 'run-1' },
    ]);
  });

  it('is silent when the snapshot reflects the highest request', () => {
    expect(checkStaleState(state, [run('run-1', call(2), call(4))])).toEqual([]);
  });

  it('is silent when the named run is not in the store, or another run is ahead', () => {
    expect(checkStaleState(state, [])).toEqual([]);
    expect(checkStaleState(state, [run('run-2', call(9))])).toEqual([]);
  });

  it('counts requests only, not a response without one', () => {
    expect(checkStaleState(state, [run('run-1', call(9, false))])).toEqual([]);
  });

  it('is silent without run_id or invoke_seq: there is nothing to compare', () => {
    const { invoke_seq: _, ...noSeq } = state;
    const { run_id: __, ...noRun } = state;
    expect(checkStaleState(noSeq, [run('run-1', call(9))])).toEqual([]);
    expect(checkStaleState(noRun, [run('run-1', call(9))])).toEqual([]);
  });

  it('uses the highest request seq across copies of the named run', () => {
    expect(checkStaleState(state, [run('run-1', call(1)), run('run-1', call(6))])).toHaveLength(1);
  });
});
