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

  it('reads the submitted record back when the action is read, not while planning (issue 11: hostile sizes)', () => {
    // An audit of a store with many pending turns whose messages are as large as the line limit must not hold them
    // all: the plan keeps where each is.
    let loads = 0;
    const counting = () => {
      loads += 1;
      return { turn_id: 'x', content: 'hi' };
    };
    const plan = planRecovery([turn('a', 'submitted'), turn('b', 'worker_started')], new Set(), undefined, counting);
    expect(plan.map((p) => p.actions.map((a) => a.kind))).toEqual([
      ['ensure_user_message', 'ensure_interruption_marker', 'append_interrupted'],
      ['ensure_user_message', 'ensure_interruption_marker', 'append_interrupted'],
    ]);
    expect(loads).toBe(0);
    const action = plan[0]?.actions[0];
    expect(action?.kind === 'ensure_user_message' ? action.submitted : undefined).toEqual({
      turn_id: 'x',
      content: 'hi',
    });
    expect(loads).toBe(1);
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

  it('gives the ensure_user_message step the members an object literal has: kind and submitted, own and enumerable', () => {
    // A class since issue 11 (one hidden class for every step, not one each): callers that spread, list or print a
    // step see what they saw before.
    const [recovery] = planRecovery([turn('a', 'submitted')], new Set(), undefined, load);
    const step = recovery?.actions[0];
    expect(Object.keys(step ?? {})).toEqual(['kind', 'submitted']);
    expect(JSON.stringify(step)).toBe('{"kind":"ensure_user_message","submitted":{"turn_id":"x","content":"hi"}}');
    expect({ ...step }).toEqual({ kind: 'ensure_user_message', submitted: { turn_id: 'x', content: 'hi' } });
  });
});
