import { describe, expect, it } from 'vitest';
import { type DerivedTurn, planRecovery } from '../../src/index.js';

const turn = (turnId: string, state: DerivedTurn['state'], files = ['a.jsonl'], withSubmitted = true): DerivedTurn => ({
  turnId,
  sessionId: 's1',
  state,
  orphan: !withSubmitted,
  terminal: state === 'completed' || state === 'interrupted',
  events: withSubmitted
    ? { submitted: { location: { file: 'a.jsonl', line: 1, offset: 0, length: 1 }, summary: { streamId: 'st' } } }
    : {},
  files,
});

// The submitted record is read back through `load`; here it comes from memory so the plan is tested on its own.
const load = () => ({ turn_id: 'x', content: 'hi' });

describe('planRecovery (spec §12)', () => {
  it('plans exactly the abandoned turns, in the required order, with the interrupted record (TJ-RECOV-002, -003, -006)', () => {
    const plan = planRecovery(
      [
        turn('a', 'worker_started'),
        turn('b', 'completed'),
        turn('c', 'interrupted'),
        turn('d', 'submitted', ['held.jsonl']),
      ],
      new Set(['held.jsonl']),
      undefined,
      load,
    );
    expect(plan.map((p) => [p.turnId, p.actions.map((a) => a.kind)])).toEqual([
      ['a', ['ensure_user_message', 'ensure_interruption_marker', 'append_interrupted']],
    ]);
    expect(plan[0]?.actions[2]).toEqual({
      kind: 'append_interrupted',
      record: {
        version: 1,
        event: 'interrupted',
        turn_id: 'a',
        session_id: 's1',
        reason: 'server_startup_recovery',
        stream_id: 'st',
      },
    });
  });

  it('restores no user message for an orphan, and never plans an assistant answer (TJ-RECOV-004)', () => {
    const plan = planRecovery([turn('o', 'assistant_started', ['a.jsonl'], false)], new Set(), undefined, load);
    expect(plan[0]?.actions.map((a) => a.kind)).toEqual(['ensure_interruption_marker', 'append_interrupted']);
    expect(JSON.stringify(plan)).not.toContain('assistant_message');
  });

  it('skips what the host already shows, and is a pure function of its inputs (TJ-RECOV-001)', () => {
    const host = { hasUserMessage: () => true, hasInterruptionMarker: (_s: string, t: string) => t === 'a' };
    const turns = [turn('a', 'submitted'), turn('b', 'submitted')];
    const first = planRecovery(turns, new Set(), host, load);
    expect(first.map((p) => p.actions.map((a) => a.kind))).toEqual([
      ['append_interrupted'],
      ['ensure_interruption_marker', 'append_interrupted'],
    ]);
    expect(planRecovery(turns, new Set(), host, load)).toEqual(first);
  });
});
