import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { propertyParameters } from '@turnjournal/test-support';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { auditStoreListing, diskContents, turnsOf } from '../../src/_internals/index.js';
import { auditStore, type HostView } from '../../src/index.js';
import { turnRecord } from '../support/turn-records.js';

// Issue 11, defect 8 (2 M orphan records): the audit that walks its turns instead of keeping an object per turn gives
// the findings, the plan and the turns of the audit that keeps them.

const line = fc.record({
  event: fc.constantFrom('submitted', 'worker_started', 'assistant_started', 'completed', 'interrupted', 'compacted'),
  // Ids out of code-point order too, so that the fold sorts its turns.
  turn: fc.constantFrom('t3', 't1', 't2', 'é', '\u{1F600}', 'a\uD800'),
  at: fc.integer({ min: 1, max: 3 }),
  stream: fc.option(fc.constantFrom('s1', 's2'), { nil: undefined }),
});
// A line of either arbitrary below: the big session's ids and streams are strings of their own.
type Line =
  | (typeof line extends fc.Arbitrary<infer T> ? T : never)
  | (typeof big extends fc.Arbitrary<(infer T)[]> ? T : never);
// A session of many turns (a fold lists its turns from 64 on), ids in any order.
const big = fc.array(
  fc.record({
    event: fc.constantFrom('submitted', 'worker_started', 'completed', 'interrupted'),
    turn: fc.integer({ min: 0, max: 199 }).map((i) => `c${i}`),
    at: fc.constant(1),
    stream: fc.option(fc.constant('s3'), { nil: undefined }),
  }),
  { minLength: 40, maxLength: 160 },
);
// Files of sessions a and b, shards included, and a line that is not JSON now and then.
const file = fc.record({
  name: fc.constantFrom('a.jsonl', 'a~2.jsonl', 'b.jsonl', 'b~x.jsonl'),
  lines: fc.array(fc.oneof({ weight: 9, arbitrary: line }, { weight: 1, arbitrary: fc.constant('{torn' as const) })),
});

const text = (sessionId: string, l: Line | '{torn') =>
  l === '{torn'
    ? '{torn\n'
    : `${JSON.stringify(
        l.event === 'compacted'
          ? { version: 1, event: 'compacted', session_id: sessionId, created_at: l.at, removed_turn_ids: [l.turn] }
          : turnRecord(sessionId, l.event, l.turn, {
              created_at: l.at,
              ...(l.stream === undefined ? {} : { stream_id: l.stream }),
            }),
      )}\n`;

describe('auditStoreListing', () => {
  it('gives the findings, plan and turns of auditStore, with no turn object kept (TJ-RECOV-001, TJ-AUDIT-010)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(file, { minLength: 1, maxLength: 4 }),
        big,
        fc.boolean(),
        fc.integer({ min: 1, max: 3 }),
        async (files, bigLines, withHost, cap) => {
          const root = mkdtempSync(join(tmpdir(), 'tj-audit-listing-'));
          const dir = join(root, '_turn_journal');
          mkdirSync(dir);
          for (const f of files)
            writeFileSync(join(dir, f.name), f.lines.map((l) => text(f.name[0] as string, l)).join(''));
          writeFileSync(join(dir, 'c.jsonl'), bigLines.map((l) => text('c', l)).join(''));
          // A host view that answers from the turn id, so both audits ask it the same questions.
          const host: HostView | undefined = withHost
            ? {
                hasUserMessage: (_s, turnId) => turnId.length % 2 === 0,
                hasInterruptionMarker: (_s, turnId) => turnId.startsWith('t'),
              }
            : undefined;
          const options = { maxFindingsPerCode: cap, ...(host === undefined ? {} : { host }) };
          const kept = await auditStore([root], options);
          const listed = await auditStoreListing(diskContents([root]), options, true);
          expect(listed.check.findings).toEqual(kept.check.findings);
          expect(listed.check.omitted).toEqual(kept.check.omitted);
          expect(listed.check.files).toEqual(kept.check.files);
          expect(listed.heldFiles).toEqual(kept.heldFiles);
          expect(JSON.stringify(listed.plan)).toBe(JSON.stringify(kept.plan));
          expect(listed.plan.length).toBe(kept.plan.length);
          expect(listed.check.sessions.map((s) => [s.sessionId, s.turnCount, s.files])).toEqual(
            kept.check.sessions.map((s) => [s.sessionId, s.turnCount, s.files]),
          );
          for (const [i, session] of listed.check.sessions.entries()) {
            const keptSession = kept.check.sessions[i];
            // Listed from 64 turns on; a session of fewer keeps its turns as objects.
            if (session.turnCount >= 64) expect(session.turns).toEqual([]);
            else expect(JSON.stringify(session.turns)).toBe(JSON.stringify(keptSession?.turns));
            expect(turnsOf(session).length).toBe(keptSession?.turns.length);
            // Twice: a list gives its turns on every walk.
            for (let walk = 0; walk < 2; walk += 1)
              expect(JSON.stringify([...turnsOf(session)])).toBe(JSON.stringify(keptSession?.turns));
            // An audit that keeps its turns gives them as they are.
            expect(turnsOf(keptSession ?? session)).toBe(keptSession?.turns);
          }
        },
      ),
      propertyParameters({ defaultRuns: 100 }),
    );
  });
});
