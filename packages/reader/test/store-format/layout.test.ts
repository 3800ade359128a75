import { join } from 'node:path';
import { propertyParameters } from '@turnjournal/test-support';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { discoverStore } from '../../src/index.js';
import { type StoreLocation, safeParseStorePath, storePathSegments } from '../../src/store-format/index.js';

const identifier = fc.stringMatching(/^[A-Za-z0-9._-]{1,40}$/).filter((id) => id !== '.' && id !== '..');
const digits = (n: number) => fc.stringMatching(new RegExp(`^\\d{${n}}$`));

const location: fc.Arbitrary<StoreLocation> = fc.oneof(
  fc.record({ family: fc.constant('turn' as const), sessionId: identifier }),
  fc.record({ family: fc.constant('turn' as const), sessionId: identifier, shard: identifier }),
  fc.record({ family: fc.constant('event' as const), sessionId: identifier }),
  fc.record({
    family: fc.constant('run' as const),
    runId: identifier,
    date: fc.record({ year: digits(4), month: digits(2), day: digits(2) }),
  }),
  fc.record({ family: fc.constant('state' as const), sessionId: identifier }),
);

describe('store layout (spec §4.4) in both directions', () => {
  it('reads back every location it builds, under any store root (TJ-FAM-010)', () => {
    fc.assert(
      fc.property(location, fc.array(identifier, { maxLength: 3 }), (where, root) => {
        const segments = storePathSegments(where);
        expect(safeParseStorePath([...root, ...segments])).toEqual(where);
      }),
      propertyParameters(),
    );
  });

  it('builds the recommended names', () => {
    expect(storePathSegments({ family: 'turn', sessionId: 's1' })).toEqual(['_turn_journal', 's1.jsonl']);
    expect(storePathSegments({ family: 'turn', sessionId: 's1', shard: '4242' })).toEqual([
      '_turn_journal',
      's1~4242.jsonl',
    ]);
    expect(storePathSegments({ family: 'event', sessionId: 's1' })).toEqual(['s1', 'events.jsonl']);
    expect(storePathSegments({ family: 'run', runId: 'r1', date: { year: '2026', month: '02', day: '04' } })).toEqual([
      'sessions',
      '2026',
      '02',
      '04',
      'r1.jsonl',
    ]);
    expect(storePathSegments({ family: 'state', sessionId: 's1' })).toEqual(['sessions', 'state', 's1.json']);
  });

  it('refuses to build a path from an id that is not a valid identifier (TJ-FAM-010)', () => {
    for (const sessionId of ['..', 'a/b', 'a~b', '', 'x'.repeat(129), 'a\u0000b']) {
      expect(() => storePathSegments({ family: 'event', sessionId })).toThrow(
        expect.objectContaining({ name: 'ReaderError', code: 'invalid_identifier' }),
      );
    }
    expect(() =>
      storePathSegments({ family: 'run', runId: 'r', date: { year: '26', month: '02', day: '04' } }),
    ).toThrow(expect.objectContaining({ code: 'invalid_option' }));
  });

  it('gives back ids as the name spells them, and nothing for paths outside the layout', () => {
    expect(safeParseStorePath(['_turn_journal', 'bad id~x.jsonl'])).toEqual({
      family: 'turn',
      sessionId: 'bad id',
      shard: 'x',
    });
    expect(safeParseStorePath(['notes.jsonl'])).toBeUndefined();
    expect(safeParseStorePath(['sessions', '2026', '02', 'r.jsonl'])).toBeUndefined();
    expect(safeParseStorePath(['sessions', 'x', 'state.json'])).toBeUndefined();
    expect(safeParseStorePath([])).toBeUndefined();
  });

  it('is what store discovery uses for its hints', () => {
    const discovered = discoverStore([join(import.meta.dirname, '../../../../examples/store')]);
    const families = new Set(discovered.files.map((file) => file.hint.family));
    expect(families).toEqual(new Set(['turn', 'event', 'run', 'state']));
  });
});
