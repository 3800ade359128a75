import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { propertyParameters } from '@turnjournal/test-support';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { auditStore, checkStore, type JournalRecord, type TurnFoldOptions } from '../../src/index.js';
import { compareCodePoints } from '../../src/turn/canonical-json.js';
import { TurnFold } from '../../src/turn/derive-turns.js';
import { FoldArena, withArena } from '../../src/turn/fold-arena.js';
import { ownString } from '../../src/turn/own-string.js';
import { representativeOf } from '../../src/turn/representative.js';
import { RepresentativeTable } from '../../src/turn/representative-table.js';
import { readAll, tempFile } from '../support/temp.js';
import { turnRecord } from '../support/turn-records.js';

// Issue 14 and issue 11 defect 8: a check whose caller reads the verdict, not the turns, keeps no summary of any
// record and no object per turn; its findings and counts are those of a check that keeps the turns.

const SESSION = 's1';
const ev = (event: string, turnId: string, extra: Record<string, unknown> = {}) =>
  turnRecord(SESSION, event, turnId, extra, 80);

const jsonl = (values: readonly unknown[]) => values.map((v) => `${JSON.stringify(v)}\n`).join('');

async function fold(paths: readonly string[], options: TurnFoldOptions, arena = new FoldArena(options.keepTurns)) {
  const turnFold = withArena(arena, () => new TurnFold(SESSION, { maxFindingsPerCode: 3, ...options }));
  for (const path of paths)
    for (const item of await readAll(path))
      if (item.kind === 'record') turnFold.add(item.record, { file: path, sessionId: SESSION });
  return { derived: turnFold.finish(), arena };
}

describe('a turn fold that keeps no turns (TurnFoldOptions.keepTurns)', () => {
  const line = fc.record({
    event: fc.constantFrom('submitted', 'worker_started', 'assistant_started', 'completed', 'interrupted', 'compacted'),
    turn: fc.constantFrom('t1', 't2', 't3', 'a\uD800', 'é', '\u{1F600}'),
    at: fc.integer({ min: 1, max: 3 }),
  });
  const value = (l: { event: string; turn: string; at: number }) =>
    l.event === 'compacted'
      ? { version: 1, event: 'compacted', session_id: SESSION, created_at: l.at, removed_turn_ids: [l.turn] }
      : ev(l.event, l.turn, { created_at: l.at });

  it('finds what a fold that keeps them finds, and counts the turns it leaves out (TJ-DERIVE-004, TJ-DERIVE-011)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(line, { maxLength: 12 }), { minLength: 1, maxLength: 3 }), async (files) => {
        const paths = files.map((lines) => tempFile(jsonl(lines.map(value))));
        const kept = (await fold(paths, {})).derived;
        const counted = (await fold(paths, { keepTurns: false })).derived;
        expect(counted.turns).toEqual([]);
        expect(counted.turnCount).toBe(kept.turns.length);
        expect(kept.turnCount).toBe(kept.turns.length);
        expect(counted.findings).toEqual(kept.findings);
        expect(counted.omitted).toEqual(kept.omitted);
      }),
      propertyParameters({ defaultRuns: 100 }),
    );
  });

  it('keeps 8 bytes a record event and no excerpt, where a fold that keeps turns keeps its summary', async () => {
    const turns = 2000;
    const values = Array.from({ length: turns }, (_, i) => [
      ev('submitted', `t${String(i).padStart(5, '0')}`),
      ev('completed', `t${String(i).padStart(5, '0')}`, { assistant_message_index: 1, stream_id: `s${i}` }),
    ]).flat();
    const path = tempFile(jsonl(values));
    const lean = (await fold([path], { keepTurns: false })).arena;
    const full = (await fold([path], {})).arena;
    expect(lean.slots).toBe(2 * turns);
    // The first page doubles up to 4,096 slots for 4,000, 8 bytes each, plus its one block's first line (8 bytes):
    // no wide column, no excerpt or string.
    expect(lean.table.heldBytes).toBe(4096 * 8 + 8);
    // Each summary: the location (8 bytes), created_at (8), the column of a stream_id, flags and two members (16),
    // the excerpt (64 bytes) and the stream_id's bytes.
    let streamIdBytes = 0;
    for (let i = 0; i < turns; i += 1) streamIdBytes += `s${i}`.length;
    expect(full.table.heldBytes).toBe(4096 * 8 + 8 + 4096 * (8 + 16) + turns * 64 + streamIdBytes);
  });

  it('keeps 16 bytes a record event that has no stream_id, content, reason, message index or attachments', async () => {
    // The 2 M orphan records of issue 11 (defect 8) are such records: no page of the optional members is made.
    const turns = 4000;
    const values = Array.from({ length: turns }, (_, i) => ev('worker_started', `t${String(i).padStart(5, '0')}`));
    const { arena, derived } = await fold([tempFile(jsonl(values))], {});
    expect(arena.table.heldBytes).toBe(4096 * 8 + 8 + 4096 * 8);
    expect(derived.turns[3999]?.events.worker_started?.summary).toEqual({ createdAt: 1 });
  });
});

describe('TurnFold turn ids', () => {
  it('finds every turn whatever the order and code units of its ids, and lists them by code point (TJ-DERIVE-007)', async () => {
    const unit = fc.constantFrom('a', 'b', 'é', '中', '\u{1F600}', '\uD800', '\uDC00', 'z');
    const id = fc.array(unit, { minLength: 1, maxLength: 4 }).map((units) => units.join(''));
    await fc.assert(
      fc.asyncProperty(fc.array(id, { minLength: 1, maxLength: 40 }), async (ids) => {
        const path = tempFile(jsonl(ids.map((turn) => ev('submitted', turn))));
        const { derived } = await fold([path], {});
        const expected = [...new Set(ids.map(ownString))].sort(compareCodePoints);
        expect(derived.turns.map((t) => t.turnId)).toEqual(expected);
        // A second record of a turn is a copy or, when its id has other code units (lone surrogates), a conflict.
        const seconds = ['duplicate_event', 'conflicting_duplicate'].map(
          (code) => derived.findings.filter((f) => f.code === code).length + (derived.omitted[code] ?? 0),
        );
        expect((seconds[0] ?? 0) + (seconds[1] ?? 0)).toBe(ids.length - expected.length);
      }),
      propertyParameters({ defaultRuns: 100 }),
    );
  });
});

describe('checkStore with keepTurns: false', () => {
  it('gives the files, findings and turn counts of a check that keeps the turns, and no turn', async () => {
    const root = mkdtempSync(join(tmpdir(), 'tj-keep-turns-'));
    mkdirSync(join(root, '_turn_journal'));
    writeFileSync(
      join(root, '_turn_journal', 'a.jsonl'),
      jsonl([
        ev('submitted', 't1'),
        ev('completed', 't1'),
        ev('worker_started', 't2'),
        ev('completed', 't1', { x: 1 }),
      ]),
    );
    writeFileSync(join(root, '_turn_journal', 'a~2.jsonl'), jsonl([ev('submitted', 't3'), ev('interrupted', 't3')]));
    writeFileSync(join(root, '_turn_journal', 'b.jsonl'), jsonl([ev('submitted', 'u1'), '{not json']));
    const kept = await checkStore([root]);
    const counted = await checkStore([root], { keepTurns: false });
    expect(counted.files).toEqual(kept.files);
    expect(counted.findings).toEqual(kept.findings);
    expect(counted.omitted).toEqual(kept.omitted);
    expect(counted.sessions.map((s) => [s.sessionId, s.turnCount, s.turns.length, s.files])).toEqual(
      kept.sessions.map((s) => [s.sessionId, s.turns.length, 0, s.files]),
    );
    expect(kept.sessions.map((s) => s.turnCount)).toEqual([3, 1]);
  });
});

describe('auditStore', () => {
  it('keeps the turns it plans from, whatever a JavaScript caller passes as keepTurns', async () => {
    const root = mkdtempSync(join(tmpdir(), 'tj-keep-turns-'));
    mkdirSync(join(root, '_turn_journal'));
    writeFileSync(join(root, '_turn_journal', 'a.jsonl'), jsonl([ev('submitted', 't1'), ev('worker_started', 't1')]));
    const audit = await auditStore([root], { keepTurns: false } as Parameters<typeof auditStore>[1]);
    expect(audit.check.sessions[0]?.turns.map((t) => [t.turnId, t.state])).toEqual([['t1', 'worker_started']]);
    expect(Array.from(audit.plan, (r) => r.turnId)).toEqual(['t1']);
  });
});

describe('a table of locations only', () => {
  it('gives every location back, offsets past 4 GiB and 2^48 and lines past 2^32 included, and no summary', () => {
    const offsets = fc.oneof(
      fc.nat(),
      fc.constantFrom(2 ** 32 - 1, 2 ** 32, 2 ** 33 + 7, 2 ** 48 - 1, 2 ** 48, 2 ** 52 + 3),
      fc.integer({ min: 2 ** 32, max: 2 ** 40 }),
    );
    const entry = fc.record({
      // The growing first page, and the next page (32,768 slots).
      slot: fc.oneof(fc.nat(9000), fc.integer({ min: 32_760, max: 33_000 })),
      offset: offsets,
      line: fc.oneof(fc.constantFrom(1, 0xffff_fffe, 0xffff_ffff, 2 ** 40), fc.integer({ min: 40_000, max: 80_000 })),
      length: fc.oneof(fc.nat(1000), fc.constantFrom(0xfffe, 0xffff, 70_000)),
      file: fc.constantFrom('a.jsonl', 'b.jsonl'),
    });
    fc.assert(
      fc.property(fc.array(entry, { minLength: 1, maxLength: 30 }), (entries) => {
        const table = new RepresentativeTable(false);
        const expected = new Map<number, unknown>();
        for (const e of entries) {
          const record = { line: e.line, bytesOffset: e.offset, bytes: new Uint8Array(e.length), value: {} };
          table.set(e.slot, record as unknown as JournalRecord, e.file);
          expected.set(e.slot, { file: e.file, line: e.line, offset: e.offset, length: e.length });
        }
        for (const [slot, location] of expected) expect(table.location(slot)).toEqual(location);
        expect(() => table.get(entries[0]?.slot ?? 0)).toThrow(/locations only/);
      }),
      propertyParameters({ defaultRuns: 300 }),
    );
  });
});

describe('a table of summaries over many pages', () => {
  it('gives back what a table of each slot alone gives, whatever the order of sets and replacements', () => {
    // Pages of 32,768 slots, whose column of optional members is made by the first slot that has one: a slot set again
    // with a record without them must read none, in a page with the column or without it.
    const value = fc.record(
      {
        created_at: fc.oneof(fc.double({ noNaN: true }), fc.constant(0)),
        stream_id: fc.string({ maxLength: 5 }),
        content: fc.string({ maxLength: 70 }),
        assistant_message_index: fc.oneof(fc.nat(10), fc.constantFrom(0xffff_ffff, -1, 2.5)),
        reason: fc.constantFrom('cancelled', 'worker_error', ''),
        attachments: fc.array(fc.constant({ name: 'a' }), { maxLength: 3 }),
      },
      { requiredKeys: [] },
    );
    const entry = fc.record({
      // The first page as it grows, and around the ends of the first two whole pages (32,768 slots each).
      slot: fc.oneof(
        fc.nat(5),
        fc.integer({ min: 4090, max: 4100 }),
        fc.integer({ min: 32_760, max: 32_780 }),
        fc.integer({ min: 65_530, max: 65_540 }),
      ),
      value,
      line: fc.nat(100_000),
      offset: fc.nat(2 ** 40),
    });
    fc.assert(
      fc.property(fc.array(entry, { minLength: 1, maxLength: 40 }), (entries) => {
        const table = new RepresentativeTable();
        const last = new Map<number, JournalRecord>();
        for (const e of entries) {
          const record = {
            value: { version: 1, event: 'submitted', turn_id: 't', session_id: SESSION, ...e.value },
            line: e.line,
            bytesOffset: e.offset,
            bytes: new Uint8Array(e.line % 300),
          } as unknown as JournalRecord;
          table.set(e.slot, record, 'a.jsonl');
          last.set(e.slot, record);
        }
        for (const [slot, record] of last) expect(table.get(slot)).toEqual(representativeOf(record, 'a.jsonl'));
      }),
      propertyParameters({ defaultRuns: 300 }),
    );
  });
});

describe('a table of locations only, over one file read in order', () => {
  it('keeps 8 bytes a slot and no wide column: lines and offsets fit as distances from where their page starts', () => {
    const table = new RepresentativeTable(false);
    const slots = 100_000;
    // Records of 2,000 bytes and more, one a line, as a large journal holds them: past 2^32 bytes and 2^16 lines.
    const at = (slot: number) => ({
      line: slot + 1,
      bytesOffset: 2 ** 32 + slot * 2_500,
      bytes: new Uint8Array(2_000),
    });
    for (let slot = 0; slot < slots; slot += 1) table.set(slot, at(slot) as unknown as JournalRecord, 'a.jsonl');
    // Four pages of 32,768 slots, 8 bytes a slot, and each page's 8 line blocks' first lines.
    expect(table.heldBytes).toBe(4 * (32_768 * 8 + 8 * 8));
    for (const slot of [0, 4_095, 4_096, 32_767, 32_768, 99_999])
      expect(table.location(slot)).toEqual({
        file: 'a.jsonl',
        line: slot + 1,
        offset: 2 ** 32 + slot * 2_500,
        length: 2_000,
      });
  });
});

describe('checkStore over sessions whose files interleave', () => {
  it('derives each session as a fold of its own files alone would (turns numbered apart in the shared arena)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'tj-keep-turns-'));
    const dir = join(root, '_turn_journal');
    mkdirSync(dir);
    // Read in this order: a, a0, then a's shard, so session a's turns are not numbered one after the other.
    const files: Record<string, unknown[]> = {
      'a.jsonl': [ev('submitted', 't2'), ev('submitted', 't1'), ev('completed', 't2')],
      'a0.jsonl': [ev('submitted', 'u1'), ev('interrupted', 'u1')],
      'a~2.jsonl': [ev('worker_started', 't1'), ev('submitted', 't0'), ev('completed', 't1'), ev('submitted', 't3')],
    };
    for (const [name, values] of Object.entries(files)) writeFileSync(join(dir, name), jsonl(values));
    const check = await checkStore([root]);
    for (const session of check.sessions) {
      const alone = withArena(new FoldArena(), () => new TurnFold(session.sessionId));
      for (const file of session.files)
        for (const item of await readAll(file))
          if (item.kind === 'record') alone.add(item.record, { file, sessionId: session.sessionId });
      const expected = alone.finish();
      expect(JSON.stringify(session.turns)).toBe(JSON.stringify(expected.turns));
      expect(session.turnCount).toBe(expected.turns.length);
    }
    expect(check.sessions.map((s) => s.turns.map((t) => `${t.turnId}:${t.state}`))).toEqual([
      ['t0:submitted', 't1:completed', 't2:completed', 't3:submitted'],
      ['u1:interrupted'],
    ]);
  });
});

describe('the per-turn columns of a fold', () => {
  it('keep 12 bytes a turn: its event bits, its first slot and its first terminal line, in one column each', async () => {
    const turns = 65_536;
    const id = (i: number) => `t${String(i).padStart(5, '0')}`;
    const values = Array.from({ length: turns }, (_, i) => [ev('submitted', id(i)), ev('completed', id(i))]).flat();
    const { arena, derived } = await fold([tempFile(jsonl(values))], { keepTurns: false });
    expect(derived.turnCount).toBe(turns);
    // Three whole pages of 65,536 entries; the file-list and scattered-slot columns, never set, their first 8 entries.
    expect(arena.columnBytes).toBe(3 * turns * 4 + 2 * 8 * 4);
  });
});

describe('event_after_terminal over readings of files of many lines', () => {
  it('compares lines within each reading only, whatever the line numbers (TJ-DERIVE-009)', async () => {
    const record = fc.record({
      event: fc.constantFrom('submitted', 'worker_started', 'completed', 'interrupted'),
      turn: fc.constantFrom('t1', 't2', 't3'),
    });
    const file = fc.array(record, { minLength: 1, maxLength: 8 });
    // Each reading's lines start past 0, 2^31 (where a fold numbers its readings' lines from 0 again) or 2^32.
    const reading = fc.record({ file: fc.nat(2), shift: fc.constantFrom(0, 2 ** 31 - 2, 2 ** 32 - 3, 2 ** 40) });
    await fc.assert(
      fc.asyncProperty(
        fc.array(file, { minLength: 3, maxLength: 3 }),
        fc.array(reading, { minLength: 1, maxLength: 6 }),
        async (files, readings) => {
          const paths = files.map((lines) => tempFile(jsonl(lines.map((l) => ev(l.event, l.turn)))));
          const turnFold = new TurnFold(SESSION, { maxFindingsPerCode: 1000, keepTurns: false });
          const expected: string[] = [];
          let previous = -1;
          for (const { file: index, shift } of readings) {
            // The same file twice in a row is one reading.
            if (index === previous) continue;
            previous = index;
            const terminal = new Map<string, number>();
            for (const item of await readAll(paths[index] as string)) {
              if (item.kind !== 'record') continue;
              const line = item.record.line + shift;
              turnFold.add({ ...item.record, line }, { file: paths[index] as string, sessionId: SESSION });
              const { event, turn_id: turn } = item.record.value as { event: string; turn_id: string };
              const first = terminal.get(turn);
              if (event === 'completed' || event === 'interrupted') {
                if (first === undefined) terminal.set(turn, line);
              } else if (first !== undefined && line > first) expected.push(`${turn}:${line}`);
            }
          }
          const found = turnFold
            .finish()
            .findings.filter((f) => f.code === 'event_after_terminal')
            .map((f) => `${f.turn_id}:${f.line}`);
          expect(found).toEqual(expected);
        },
      ),
      propertyParameters({ defaultRuns: 100 }),
    );
  });
});
