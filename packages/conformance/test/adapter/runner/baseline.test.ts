import { describe, expect, it } from 'vitest';
import { evaluateBaseline } from '../../../src/adapter/runner/baseline.js';
import type { RecordedCheck } from '../../../src/adapter/runner/record.js';

const check = (id: string, status: RecordedCheck['status']): RecordedCheck => ({
  id,
  title: id,
  tier: id.startsWith('writer/') ? 'writer' : id.startsWith('reader/') ? 'reader' : 'adapter',
  requirements: ['TJ-DUR-003'],
  status,
  details: [],
  situations: 1,
  duration_ms: 0,
});
const all = () => true;

describe('evaluateBaseline (TJ-CONF-017)', () => {
  it('turns a listed failing check into an expected failure with its reason', () => {
    const { checks } = evaluateBaseline([check('writer/lock', 'failed')], {
      baseline: new Map([['writer/lock', 'no locking yet']]),
      judged: all,
      started: true,
    });
    expect(checks.map((c) => [c.id, c.status])).toEqual([['writer/lock', 'expected_failure']]);
    expect(checks[0]?.details).toEqual(['expected failure: no locking yet']);
  });

  it('marks a listed passing check stale, and leaves unlisted checks and listed skipped checks alone', () => {
    const { checks } = evaluateBaseline(
      [check('writer/lock', 'passed'), check('writer/restart', 'failed'), check('writer/fsync-before-ack', 'skipped')],
      {
        baseline: new Map([
          ['writer/lock', 'fixed since'],
          ['writer/fsync-before-ack', 'no strace here'],
        ]),
        judged: all,
        started: true,
      },
    );
    expect(checks.map((c) => c.status)).toEqual(['stale_expected_failure', 'failed', 'skipped']);
  });

  it('an entry naming no check at all is stale when the run selected that id (a typo does not go unnoticed)', () => {
    const { checks, unjudged } = evaluateBaseline([check('writer/lock', 'passed')], {
      baseline: new Map([['writer/lokc', 'typo']]),
      judged: all,
      started: true,
    });
    expect(checks.map((c) => [c.id, c.status, c.requirements])).toEqual([
      ['writer/lock', 'passed', ['TJ-DUR-003']],
      ['writer/lokc', 'stale_expected_failure', ['TJ-CONF-017']],
    ]);
    expect(unjudged).toEqual([]);
  });

  it('an entry for a check this run did not select (--only, --tier) is neither stale nor expected', () => {
    const { checks, unjudged } = evaluateBaseline([check('reader/store/framing.json#0', 'passed')], {
      baseline: new Map([
        ['writer/lock', 'no locking yet'],
        ['reader/store/basics.json#3', 'known'],
      ]),
      judged: (id) => id.startsWith('reader/store/framing.json'),
      started: true,
    });
    expect(checks.map((c) => [c.id, c.status])).toEqual([['reader/store/framing.json#0', 'passed']]);
    expect(unjudged).toEqual(['writer/lock', 'reader/store/basics.json#3']);
  });

  it('a failed start judges no entry: the failure is the start check, not every entry stale', () => {
    const { checks, unjudged } = evaluateBaseline([check('adapter/start', 'failed')], {
      baseline: new Map([
        ['writer/lock', 'no locking yet'],
        ['reader/generated#1', 'known'],
      ]),
      judged: all,
      started: false,
    });
    expect(checks.map((c) => [c.id, c.status])).toEqual([['adapter/start', 'failed']]);
    expect(unjudged).toEqual(['writer/lock', 'reader/generated#1']);
  });

  it('is pure: the input checks are not changed', () => {
    const input = [check('writer/lock', 'passed')];
    evaluateBaseline(input, { baseline: new Map([['writer/lock', 'x']]), judged: all, started: true });
    expect(input[0]?.status).toBe('passed');
    expect(input[0]?.details).toEqual([]);
  });
});
