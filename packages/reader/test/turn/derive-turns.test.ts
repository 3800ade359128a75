import { TURN_EVENTS } from '@turnjournal/schema';
import { propertyParameters } from '@turnjournal/test-support';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadRecord } from '../../src/file/load-record.js';
import { type JournalRecord, TurnFold } from '../../src/index.js';
import { excerpt } from '../../src/report/excerpt.js';
import { ownString } from '../../src/turn/own-string.js';
import { representativeOf } from '../../src/turn/representative.js';
import { RepresentativeTable } from '../../src/turn/representative-table.js';
import { readAll, tempFile } from '../support/temp.js';
import { turnRecord } from '../support/turn-records.js';

const SESSION = 's1';
const ev = (event: string, turnId: string, extra: Record<string, unknown> = {}) =>
  turnRecord(SESSION, event, turnId, extra);

async function derive(files: readonly (readonly unknown[])[]) {
  const fold = new TurnFold(SESSION);
  for (const values of files) {
    const path = tempFile(values.map((v) => `${JSON.stringify(v)}\n`).join(''));
    for (const item of await readAll(path))
      if (item.kind === 'record') fold.add(item.record, { file: path, sessionId: SESSION });
  }
  return fold.finish();
}

const states = (d: Awaited<ReturnType<typeof derive>>) => Object.fromEntries(d.turns.map((t) => [t.turnId, t.state]));
const codes = (d: Awaited<ReturnType<typeof derive>>) => d.findings.map((f) => `${f.code}:${f.turn_id ?? ''}`).sort();

describe('TurnFold (spec §10)', () => {
  it('derives each turn as its highest-ranked event; skipping forward is legal (TJ-DERIVE-001)', async () => {
    const d = await derive([
      [
        ev('submitted', 'a'),
        ev('worker_started', 'a'),
        ev('submitted', 'b'),
        ev('worker_started', 'b'),
        ev('completed', 'b'),
        ev('submitted', 'c'),
        ev('assistant_started', 'c'),
      ],
    ]);
    expect(states(d)).toEqual({ a: 'worker_started', b: 'completed', c: 'assistant_started' });
    expect(d.findings).toEqual([]);
  });

  it('keeps terminal sticky and reports a later non-terminal event in the same file (TJ-DERIVE-008, TJ-DERIVE-009)', async () => {
    const d = await derive([[ev('submitted', 'a'), ev('interrupted', 'a'), ev('worker_started', 'a')]]);
    expect(states(d)).toEqual({ a: 'interrupted' });
    expect(codes(d)).toEqual(['event_after_terminal:a']);
  });

  it('lets completed win over interrupted and reports the conflict (TJ-DERIVE-010)', async () => {
    const d = await derive([
      [ev('submitted', 'a'), ev('interrupted', 'a', { reason: 'server_startup_recovery' })],
      [ev('completed', 'a')],
    ]);
    expect(states(d)).toEqual({ a: 'completed' });
    expect(codes(d)).toEqual(['terminal_conflict:a']);
  });

  it('counts exact copies once, whatever the member order (TJ-DERIVE-011)', async () => {
    const copy = {
      created_at: 1,
      turn_id: 'a',
      event: 'submitted',
      version: 1,
      session_id: SESSION,
      role: 'user',
      content: 'hello a',
    };
    const d = await derive([[ev('submitted', 'a')], [copy]]);
    expect(codes(d)).toEqual(['duplicate_event:a']);
  });

  it('reports orphans and still derives them (TJ-DERIVE-012)', async () => {
    const d = await derive([[ev('worker_started', 'z')]]);
    expect(d.turns).toMatchObject([{ turnId: 'z', state: 'worker_started', orphan: true }]);
    expect(codes(d)).toEqual(['orphan_turn:z']);
  });

  it('picks the representative with the smallest bytes, in any order (TJ-DERIVE-013)', async () => {
    const one = ev('submitted', 'a', { created_at: 2 });
    const two = ev('submitted', 'a', { created_at: 1 });
    for (const order of [
      [one, two],
      [two, one],
    ]) {
      const d = await derive([order]);
      expect(d.turns[0]?.events.submitted?.summary.createdAt).toBe(1);
      expect(codes(d)).toEqual(['conflicting_duplicate:a']);
    }
  });

  it('drops turns a compaction removed, even when their remnants precede the record (TJ-DERIVE-006)', async () => {
    const compacted = { version: 1, event: 'compacted', created_at: 9, removed_turns: 1, removed_turn_ids: ['a'] };
    const d = await derive([[ev('worker_started', 'a'), ev('submitted', 'b')], [compacted]]);
    expect(states(d)).toEqual({ b: 'submitted' });
    expect(d.findings).toEqual([]);
  });

  it('ignores unknown events, extensions and invalid records for the fold (TJ-DERIVE-005)', async () => {
    const d = await derive([
      [
        ev('submitted', 'a'),
        ev('paused', 'a'),
        ev('x.acme.note', 'a'),
        ev('completed', 'a', { created_at: 'yesterday' }),
      ],
    ]);
    expect(states(d)).toEqual({ a: 'submitted' });
  });

  it('lists turns by code point, not UTF-16 unit (TJ-DERIVE-007)', async () => {
    const d = await derive([[ev('submitted', '\u{1F600}'), ev('submitted', '\uFF5E')]]);
    expect(d.turns.map((t) => t.turnId)).toEqual(['\uFF5E', '\u{1F600}']);
  });

  it('attributes a record naming another session to its file and reports it (TJ-FAM-018)', async () => {
    const d = await derive([[ev('submitted', 'a', { session_id: 'other' })]]);
    expect(d.turns[0]?.sessionId).toBe(SESSION);
    expect(codes(d)).toEqual(['session_mismatch:']);
  });
});

describe('TurnFold properties', () => {
  const event = fc.record({
    name: fc.constantFrom('submitted', 'worker_started', 'assistant_started', 'completed', 'interrupted'),
    turn: fc.constantFrom('t1', 't2', 't3', 't4'),
    at: fc.integer({ min: 0, max: 3 }),
  });

  it('shard order, record order and duplication never change derived states (TJ-DERIVE-002, TJ-DERIVE-004)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(event, { maxLength: 14 }), fc.nat(), fc.nat(), async (events, shardSeed, dupSeed) => {
        const values = events.map((e) => ev(e.name, e.turn, { created_at: e.at }));
        const baseline = states(await derive([values]));
        const shards: unknown[][] = [[], [], []];
        for (const [i, v] of values.entries()) shards[(i + shardSeed) % 3]?.push(v);
        const duplicated = values.length > 0 ? [...values, values[dupSeed % values.length]] : values;
        const reversed = [...shards].reverse().map((s) => [...s].reverse());
        expect(states(await derive(shards))).toEqual(baseline);
        expect(states(await derive(reversed))).toEqual(baseline);
        expect(states(await derive([duplicated]))).toEqual(baseline);
      }),
      propertyParameters(),
    );
  });

  it('injected unknown members never change derived states and survive in the representative records', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(event, { minLength: 1, maxLength: 10 }),
        fc.string({ minLength: 1, maxLength: 6 }),
        async (events, extra) => {
          const plain = events.map((e) => ev(e.name, e.turn));
          const name = `x_${extra}`;
          const enriched = plain.map((v) => ({ ...v, [name]: { nested: [1, extra] } }));
          const d = await derive([enriched]);
          expect(states(d)).toEqual(states(await derive([plain])));
          for (const turn of d.turns)
            for (const rep of Object.values(turn.events))
              if (rep !== undefined) expect(loadRecord(rep.location)[name]).toEqual({ nested: [1, extra] });
        },
      ),
      propertyParameters(),
    );
  });
});

describe('TurnFold representatives and finished turns', () => {
  it('summarises each representative from its own record, with where it is (TJ-DERIVE-013, TJ-AUDIT-012)', async () => {
    const content = `${'é'.repeat(40)} and more`;
    const submitted = ev('submitted', 'a', {
      stream_id: 's-1',
      content,
      attachments: [{ name: 'n', path: 'p', mime: 'm' }],
    });
    const started = ev('assistant_started', 'a', { stream_id: 's-1', assistant_message_index: 3, created_at: 2.5 });
    const interrupted = ev('interrupted', 'a', { stream_id: 's-2', reason: 'worker_error' });
    const d = await derive([[submitted, started, interrupted]]);
    const events = d.turns[0]?.events ?? {};
    expect(Object.keys(events)).toEqual(['submitted', 'assistant_started', 'interrupted']);
    expect(events.submitted?.summary).toEqual({
      createdAt: 1,
      streamId: 's-1',
      contentExcerpt: 'é'.repeat(32),
      contentTruncated: true,
      attachments: 1,
    });
    expect(events.assistant_started?.summary).toEqual({ createdAt: 2.5, streamId: 's-1', assistantMessageIndex: 3 });
    expect(events.interrupted?.summary).toEqual({ createdAt: 1, streamId: 's-2', reason: 'worker_error' });
    for (const [event, value] of [
      ['submitted', submitted],
      ['assistant_started', started],
      ['interrupted', interrupted],
    ] as const) {
      const location = events[event]?.location;
      expect(location?.length).toBe(Buffer.byteLength(JSON.stringify(value)));
      expect(location === undefined ? undefined : loadRecord(location)).toEqual(value);
    }
  });

  it('replaces the whole summary when a smaller duplicate takes over (TJ-DERIVE-013)', async () => {
    const larger = ev('submitted', 'a', { created_at: 2, stream_id: 's', attachments: [], content: 'x'.repeat(100) });
    const smaller = ev('submitted', 'a', { created_at: 1 });
    for (const order of [
      [larger, smaller],
      [smaller, larger],
    ]) {
      const d = await derive([order]);
      expect(d.turns[0]?.events.submitted?.summary).toEqual({
        createdAt: 1,
        contentExcerpt: 'hello a',
        contentTruncated: false,
      });
    }
  });

  it('builds events on each access without keeping them, and serialises a turn with them', async () => {
    const d = await derive([[ev('submitted', 'a'), ev('completed', 'a')]]);
    const turn = d.turns[0];
    // Equal, not the same object: a turn keeps no copy of its events (memory of a million-turn report, issue 11).
    expect(turn?.events).toEqual(turn?.events);
    expect(turn?.events).not.toBe(turn?.events);
    expect(Object.keys(turn ?? {})).toEqual(['turnId', 'sessionId', 'state', 'orphan', 'terminal', 'files']);
    const json = JSON.parse(JSON.stringify(turn));
    expect(Object.keys(json)).toEqual(['turnId', 'sessionId', 'state', 'orphan', 'terminal', 'events', 'files']);
    expect(json.events).toEqual(JSON.parse(JSON.stringify(turn?.events)));
  });

  it('derives read-only turns whose members a spread copies with their values', async () => {
    const d = await derive([[ev('submitted', 'a'), ev('interrupted', 'a')], [ev('worker_started', 'o')]]);
    const [turn, orphan] = d.turns;
    expect({ ...turn }).toEqual({
      turnId: 'a',
      sessionId: SESSION,
      state: 'interrupted',
      orphan: false,
      terminal: true,
      files: turn?.files,
    });
    expect({ ...orphan }).toMatchObject({ turnId: 'o', sessionId: SESSION, state: 'worker_started', orphan: true });
    // What a turn says follows from its records: a caller cannot change it (the fold keeps it outside the object).
    const writable = turn as unknown as Record<string, unknown>;
    for (const member of ['sessionId', 'state', 'orphan', 'terminal']) {
      expect(() => {
        writable[member] = 'x';
      }).toThrow(TypeError);
    }
    expect(turn?.state).toBe('interrupted');
  });

  it('reports an event after terminal past line 2^32 with its terminal line (TJ-DERIVE-009)', async () => {
    const path = tempFile(
      [ev('submitted', 'a'), ev('completed', 'a'), ev('worker_started', 'a')]
        .map((v) => `${JSON.stringify(v)}\n`)
        .join(''),
    );
    const fold = new TurnFold(SESSION);
    // The same records as if the file had 2^32 lines before them: a line the fold's columns do not hold as they are.
    for (const item of await readAll(path))
      if (item.kind === 'record')
        fold.add({ ...item.record, line: 2 ** 32 + item.record.line }, { file: path, sessionId: SESSION });
    const [finding] = fold.finish().findings;
    expect(finding).toMatchObject({ code: 'event_after_terminal', line: 2 ** 32 + 3 });
    expect(finding?.message).toContain(`(line ${2 ** 32 + 2})`);
  });

  it('finds each representative however the records of turns interleave in and across files (TJ-DERIVE-013)', async () => {
    // The arena places a turn's slots after its first one while no other turn takes a slot in between, and elsewhere
    // otherwise: every interleaving must still find each event's representative, the first of its smallest records.
    const event = fc.constantFrom(...TURN_EVENTS);
    const line = fc.record({ turn: fc.constantFrom('a', 'b', 'c'), event, at: fc.integer({ min: 1, max: 3 }) });
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(line, { maxLength: 10 }), { minLength: 1, maxLength: 3 }), async (files) => {
        const values = files.map((lines) => lines.map((l) => ev(l.event, l.turn, { created_at: l.at })));
        const expected = new Map<string, { file: number; line: number; bytes: Buffer }>();
        values.forEach((records, file) => {
          records.forEach((value, index) => {
            const key = `${value.turn_id} ${value.event}`;
            const bytes = Buffer.from(JSON.stringify(value));
            const best = expected.get(key);
            if (best === undefined || Buffer.compare(bytes, best.bytes) < 0)
              expected.set(key, { file, line: index + 1, bytes });
          });
        });
        const paths = values.map((records) => tempFile(records.map((v) => `${JSON.stringify(v)}\n`).join('')));
        const fold = new TurnFold(SESSION);
        for (const path of paths)
          for (const item of await readAll(path))
            if (item.kind === 'record') fold.add(item.record, { file: path, sessionId: SESSION });
        const found = new Map<string, { file: number; line: number }>();
        for (const turn of fold.finish().turns)
          for (const [name, { location }] of Object.entries(turn.events))
            found.set(`${turn.turnId} ${name}`, { file: paths.indexOf(location.file), line: location.line });
        expect(found).toEqual(new Map([...expected].map(([key, { file, line }]) => [key, { file, line }])));
      }),
      propertyParameters({ defaultRuns: 100 }),
    );
  });

  it('derives once: finish() returns the same derivation, and add() after it throws', async () => {
    const path = tempFile(`${JSON.stringify(ev('submitted', 'a'))}\n`);
    const fold = new TurnFold(SESSION);
    const items = await readAll(path);
    const record = items.find((i) => i.kind === 'record');
    if (record?.kind !== 'record') throw new Error('no record');
    fold.add(record.record, { file: path, sessionId: SESSION });
    const first = fold.finish();
    expect(fold.finish()).toBe(first);
    expect(() => fold.add(record.record, { file: path, sessionId: SESSION })).toThrow(/after finish/);
  });

  it('finds every turn whatever the order of its ids, and lists them by code point (TJ-DERIVE-004, TJ-DERIVE-007)', async () => {
    const d = await derive([
      [
        ev('submitted', 'b'),
        ev('submitted', 'd'),
        ev('worker_started', 'b'),
        ev('submitted', 'a'),
        ev('completed', 'd'),
        ev('worker_started', 'a'),
        ev('completed', 'b'),
        ev('submitted', 'c'),
      ],
      [ev('assistant_started', 'a'), ev('worker_started', 'c')],
    ]);
    expect(d.turns.map((t) => [t.turnId, t.state])).toEqual([
      ['a', 'assistant_started'],
      ['b', 'completed'],
      ['c', 'worker_started'],
      ['d', 'completed'],
    ]);
    expect(d.findings).toEqual([]);
  });

  it('keeps the session id it was given, whatever its code units', async () => {
    const sessionId = 's\uD800';
    const path = tempFile(`${JSON.stringify(ev('submitted', 'a', { session_id: sessionId }))}\n`);
    const fold = new TurnFold(sessionId);
    for (const item of await readAll(path))
      if (item.kind === 'record') fold.add(item.record, { file: path, sessionId });
    const d = fold.finish();
    expect([d.sessionId, d.turns[0]?.sessionId]).toEqual([sessionId, sessionId]);
    expect(d.findings.map((f) => f.code)).not.toContain('session_mismatch');
  });

  it('keys a turn id with a lone surrogate as its copy, with U+FFFD (TJ-DERIVE-007)', async () => {
    for (const order of [
      ['\uD800x', '\uFFFDx'],
      ['\uFFFDx', '\uD800x'],
    ]) {
      const d = await derive([
        [ev('submitted', 'a'), ev('submitted', order[0] as string), ev('completed', 'b')],
        [ev('worker_started', order[1] as string)],
      ]);
      expect(d.turns.map((t) => [t.turnId, t.state])).toEqual([
        ['a', 'submitted'],
        ['b', 'completed'],
        ['\uFFFDx', 'worker_started'],
      ]);
    }
  });
});

describe('representative summaries', () => {
  const record = (value: Record<string, unknown>) =>
    ({ line: 1, offset: 0, value, bytes: new Uint8Array(10), bytesOffset: 0 }) as unknown as JournalRecord;

  it('hold the content excerpt as excerpt() cuts it, lone surrogates as U+FFFD (TJ-AUDIT-012)', () => {
    const unit = fc.constantFrom('a', 'é', '中', '\u{1F600}', '\uD800', '\uDC00', '\uFEFF', '\u0000');
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 80 }), (units) => {
        const content = units.join('');
        const cut = excerpt(content);
        const { summary } = representativeOf(record({ content }), 'f.jsonl');
        expect(summary.contentExcerpt).toBe(ownString(cut.text));
        expect(summary.contentTruncated).toBe(cut.truncated);
      }),
      propertyParameters({ defaultRuns: 1000 }),
    );
  });

  it('hold every member of the summary, whichever of them a record has and however large (TJ-DERIVE-013)', () => {
    // The table keeps two optional members in its columns and the rest aside: every combination, with numbers that
    // do not fit a column (fractions, negatives, past 2^32) and line numbers past 2^32, must come back as it went in.
    const numbers = fc.oneof(fc.nat(10), fc.constantFrom(0xffff_fffe, 0xffff_ffff, 2 ** 40, -1, 2.5, 1e300));
    const value = fc.record(
      {
        created_at: fc.oneof(fc.double({ noNaN: true }), fc.constant(0)),
        stream_id: fc.string({ maxLength: 5 }),
        content: fc.string({ maxLength: 70 }),
        assistant_message_index: numbers,
        reason: fc.constantFrom('cancelled', 'worker_error', ''),
        attachments: fc.array(fc.constant({ name: 'a' }), { maxLength: 3 }),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(value, fc.constantFrom(1, 0xffff_fffe, 0xffff_ffff, 2 ** 40), (v, line) => {
        const at = { ...record(v), line, bytesOffset: 2 ** 33 + 7, bytes: new Uint8Array(12) } as JournalRecord;
        const { location, summary } = representativeOf(at, 'f.jsonl');
        const expected: Record<string, unknown> = {};
        if (v.created_at !== undefined) expected.createdAt = v.created_at;
        if (v.stream_id !== undefined) expected.streamId = v.stream_id;
        if (v.reason !== undefined) expected.reason = v.reason;
        if (v.assistant_message_index !== undefined) expected.assistantMessageIndex = v.assistant_message_index;
        if (v.content !== undefined) {
          expected.contentExcerpt = ownString(excerpt(v.content).text);
          expected.contentTruncated = excerpt(v.content).truncated;
        }
        if (v.attachments !== undefined) expected.attachments = v.attachments.length;
        expect(summary).toEqual(expected);
        expect(Object.keys(summary)).toEqual(Object.keys(expected));
        expect(location).toEqual({ file: 'f.jsonl', line, offset: 2 ** 33 + 7, length: 12 });
      }),
      propertyParameters({ defaultRuns: 500 }),
    );
  });

  it('read back every stream_id of a run of records in one table, repeated ones and lone surrogates too (TJ-DERIVE-013)', () => {
    // Consecutive records with an equal stream_id share its entry; a lone surrogate reads back as U+FFFD (ownString).
    const streamId = fc.constantFrom('s-1', 's-2', 'stream-with-a-long-id-0001', '\uD800', '\uFFFD', 'a\uDC00b', '');
    fc.assert(
      fc.property(fc.array(streamId, { minLength: 1, maxLength: 30 }), (ids) => {
        const table = new RepresentativeTable();
        for (const [slot, id] of ids.entries()) table.set(slot, record({ stream_id: id }), 'f.jsonl');
        for (const [slot, id] of ids.entries()) expect(table.get(slot).summary.streamId).toBe(ownString(id));
      }),
      propertyParameters({ defaultRuns: 500 }),
    );
  });

  it('keep every turn apart as the fold grows (TJ-DERIVE-013)', async () => {
    const values = Array.from({ length: 300 }, (_, i) =>
      ev('submitted', `t${String(i).padStart(3, '0')}`, { content: `${i} ${'ü'.repeat(i % 50)}`, created_at: i }),
    );
    const d = await derive([values]);
    expect(d.turns).toHaveLength(300);
    for (const [i, turn] of d.turns.entries()) {
      const content = `${i} ${'ü'.repeat(i % 50)}`;
      expect(turn.events.submitted?.summary).toEqual({
        createdAt: i,
        contentExcerpt: excerpt(content).text,
        contentTruncated: excerpt(content).truncated,
      });
    }
  });

  it('keep every turn apart past the first pages of the table: 10,000 slots and 640 kB of excerpts (TJ-DERIVE-013)', async () => {
    // Pages hold 4,096 slots and 256 KiB of excerpts: this fold fills three of each, and an excerpt that did not fit
    // at the end of a page starts the next one.
    const turns = 5000;
    const id = (i: number) => `t${String(i).padStart(5, '0')}`;
    const content = (i: number, kind: string) => `${kind} ${i} ${'é'.repeat(30 + (i % 7))}`;
    const values = Array.from({ length: turns }, (_, i) => [
      ev('submitted', id(i), { content: content(i, 'question'), created_at: i }),
      ev('completed', id(i), { content: content(i, 'answer'), created_at: i + 0.5 }),
    ]).flat();
    const d = await derive([values]);
    expect(d.turns).toHaveLength(turns);
    for (const [i, turn] of d.turns.entries()) {
      expect(turn.turnId).toBe(id(i));
      const { submitted, completed } = turn.events;
      expect(submitted?.summary).toEqual({
        createdAt: i,
        contentExcerpt: excerpt(content(i, 'question')).text,
        contentTruncated: excerpt(content(i, 'question')).truncated,
      });
      expect(completed?.summary.contentExcerpt).toBe(excerpt(content(i, 'answer')).text);
      expect(completed?.summary.createdAt).toBe(i + 0.5);
      expect(submitted?.location.line).toBe(2 * i + 1);
      expect(completed?.location.line).toBe(2 * i + 2);
      if (i % 997 === 0 && completed !== undefined) expect(loadRecord(completed.location)).toEqual(values[2 * i + 1]);
    }
  });
});
