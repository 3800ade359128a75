// Coverage of the turn journal writer's lifecycle and durability rules (spec §4.3, §5, §11.1, §11.3).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newTurnId, openEventLog, openRunWriter, openTurnJournal, turnJournalFileName } from '../support/internals.js';
import { tempDir } from '../support/temp.js';
import { TraceFileSystem } from './trace-fs.js';

function events(path: string): string[] {
  return readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((line) => `${JSON.parse(line).turn_id}:${JSON.parse(line).event}`);
}

describe('turn journal writer: transitions and ids (spec §5)', () => {
  it('refuses, writing nothing, repeated and backward steps and any step after a terminal event, also one written by another shard or before a reopen; completed and interrupted follow any non-terminal state (TJ-TURN-014)', async () => {
    const dir = tempDir();
    const a = await openTurnJournal({ dir, sessionId: 's', shard: 'a' });
    await a.submit({ content: 'one', turnId: 't1' });
    await a.workerStarted('t1');
    await expect(a.workerStarted('t1')).rejects.toMatchObject({ code: 'illegal_transition' });
    await a.assistantStarted('t1');
    await expect(a.workerStarted('t1')).rejects.toMatchObject({ code: 'illegal_transition' });
    // Skipping forward to a terminal event is legal from every non-terminal state.
    await a.submit({ content: 'two', turnId: 't2' });
    await a.complete('t2');
    await a.submit({ content: 'three', turnId: 't3' });
    await a.workerStarted('t3');
    await a.interrupt('t3', 'cancelled');
    await a.complete('t1');
    for (const turnId of ['t1', 't2', 't3']) {
      await expect(a.interrupt(turnId, 'cancelled')).rejects.toMatchObject({ code: 'illegal_transition' });
      await expect(a.complete(turnId)).rejects.toMatchObject({ code: 'illegal_transition' });
      await expect(a.assistantStarted(turnId)).rejects.toMatchObject({ code: 'illegal_transition' });
    }
    await a.close();
    const fileA = join(dir, 's~a.jsonl');
    const written = events(fileA);
    // Terminal in another shard, and terminal before a reopen, are still terminal.
    const b = await openTurnJournal({ dir, sessionId: 's', shard: 'b' });
    await expect(b.workerStarted('t2')).rejects.toMatchObject({ code: 'illegal_transition' });
    await expect(b.interrupt('t1', 'server_startup_recovery')).rejects.toMatchObject({ code: 'illegal_transition' });
    await b.close();
    const reopened = await openTurnJournal({ dir, sessionId: 's', shard: 'a' });
    await expect(reopened.complete('t3')).rejects.toMatchObject({ code: 'illegal_transition' });
    await reopened.close();
    expect(events(fileA)).toEqual(written);
    expect(written).toEqual([
      't1:submitted',
      't1:worker_started',
      't1:assistant_started',
      't2:submitted',
      't2:completed',
      't3:submitted',
      't3:worker_started',
      't3:interrupted',
      't1:completed',
    ]);
    expect(readFileSync(join(dir, 's~b.jsonl'), 'utf8')).toBe('');
  });

  it('never reuses a turn id for a different turn: other content under a known id is refused, in the same writer, after a reopen and from another shard (TJ-TURN-003)', async () => {
    const dir = tempDir();
    const a = await openTurnJournal({ dir, sessionId: 's', shard: 'a' });
    await a.submit({ content: 'first question', turnId: 't1' });
    await expect(a.submit({ content: 'another question', turnId: 't1' })).rejects.toMatchObject({
      code: 'turn_id_conflict',
    });
    // The same submission again is a retry, not a new turn: nothing is written.
    expect(await a.submit({ content: 'first question', turnId: 't1' })).toMatchObject({ created: false });
    await a.complete('t1');
    await expect(a.submit({ content: 'a later question', turnId: 't1' })).rejects.toMatchObject({
      code: 'turn_id_conflict',
    });
    await a.close();
    const reopened = await openTurnJournal({ dir, sessionId: 's', shard: 'a' });
    await expect(reopened.submit({ content: 'after reopen', turnId: 't1' })).rejects.toMatchObject({
      code: 'turn_id_conflict',
    });
    await reopened.close();
    const other = await openTurnJournal({ dir, sessionId: 's', shard: 'b' });
    await expect(other.submit({ content: 'from another shard', turnId: 't1' })).rejects.toMatchObject({
      code: 'turn_id_conflict',
    });
    // Generated ids are fresh: two submissions without an id never share one.
    const x = await other.submit({ content: 'x' });
    const y = await other.submit({ content: 'x' });
    expect(x.turnId).not.toBe(y.turnId);
    await other.close();
    expect(events(join(dir, 's~a.jsonl'))).toEqual(['t1:submitted', 't1:completed']);
    expect(events(join(dir, 's~b.jsonl'))).toEqual([`${x.turnId}:submitted`, `${y.turnId}:submitted`]);
  });

  it('uses only valid identifiers as shard names: a bad shard is refused before any file or directory exists (TJ-FAM-014)', async () => {
    const root = tempDir();
    const dir = join(root, '_turn_journal');
    for (const shard of ['', '.', '..', '../x', 'a/b', 'a b', 'a~b', 'x'.repeat(129), 'nul\u0000', 'ü']) {
      expect(() => turnJournalFileName('s', shard)).toThrow(expect.objectContaining({ code: 'invalid_identifier' }));
      await expect(openTurnJournal({ dir, sessionId: 's', shard })).rejects.toMatchObject({
        code: 'invalid_identifier',
      });
    }
    expect(existsSync(dir)).toBe(false);
    expect(readdirSync(root)).toEqual([]);
    expect(turnJournalFileName('s', '4242')).toBe('s~4242.jsonl');
  });

  it('generates turn ids of the form YYYYMMDDTHHMMSSZ-<12 hex> that sort by creation time (TJ-TURN-004)', async () => {
    const form = /^\d{8}T\d{6}Z-[0-9a-f]{12}$/;
    expect(newTurnId(Date.UTC(2026, 4, 11, 0, 11, 22))).toMatch(/^20260511T001122Z-[0-9a-f]{12}$/);
    const times = [Date.UTC(2025, 11, 31, 23, 59, 59), Date.UTC(2026, 0, 1), Date.UTC(2026, 0, 1, 0, 0, 1)];
    const ids = times.map((t) => newTurnId(t));
    for (const id of ids) expect(id).toMatch(form);
    expect([...ids].sort()).toEqual(ids);
    const dir = tempDir();
    const journal = await openTurnJournal({ dir, sessionId: 's', clock: () => Date.UTC(2026, 4, 11, 0, 11, 22, 123) });
    const { turnId } = await journal.submit({ content: 'x' });
    await journal.close();
    expect(turnId).toMatch(/^20260511T001122Z-[0-9a-f]{12}$/);
  });

  it('draws fresh random bits for every id, across refills of the pool of random bytes (TJ-TURN-004)', () => {
    const at = Date.UTC(2026, 4, 11, 0, 11, 22);
    // 2,000 ids in one second cross the 512-id pool three times; 48 random bits make a collision here ~1e-8.
    const ids = Array.from({ length: 2000 }, () => newTurnId(at));
    expect(new Set(ids).size).toBe(ids.length);
    const suffixes = ids.map((id) => id.slice(-12));
    expect(suffixes.filter((suffix) => suffix === '000000000000')).toEqual([]);
  });
});

describe('turn journal writer: durability (spec §11.1, §11.3)', () => {
  it('makes submitted durable before submit returns: its write, then an fdatasync of the file, then the answer (TJ-DUR-001)', async () => {
    const dir = tempDir();
    const fs = new TraceFileSystem();
    const journal = await openTurnJournal({ dir, sessionId: 's', fs });
    const file = join(dir, 's.jsonl');
    for (const turnId of ['t1', 't2']) {
      await journal.submit({ content: `question ${turnId}`, turnId });
      fs.mark(`submitted ${turnId}`);
      const resolved = fs.marks.at(-1)?.at as number;
      const write = fs.calls.findLast((c) => c.op === 'write' && c.path === file && c.bytes?.includes(`"${turnId}"`));
      expect(write, `no write of ${turnId}`).toBeDefined();
      expect(write?.bytes).toContain('"event":"submitted"');
      const sync = fs.calls.find(
        (c) => (c.op === 'fdatasync' || c.op === 'fsync') && c.path === file && c.done > (write?.done as number),
      );
      expect(sync, `no sync of ${file} after the write of ${turnId}`).toBeDefined();
      expect(sync?.done).toBeLessThan(resolved);
    }
    await journal.close();
  });

  it('uses the every mode when the caller chooses none: one fdatasync per record, each before its answer (TJ-DUR-012)', async () => {
    const dir = tempDir();
    const fs = new TraceFileSystem();
    const journal = await openTurnJournal({ dir, sessionId: 's', fs });
    expect(journal.durability).toBe('every');
    const file = join(dir, 's.jsonl');
    const syncs = () => fs.calls.filter((c) => c.op === 'fdatasync' && c.path === file).length;
    await journal.submit({ content: 'x', turnId: 't1' });
    for (const step of [
      () => journal.workerStarted('t1'),
      () => journal.assistantStarted('t1'),
      () => journal.complete('t1'),
    ]) {
      const before = syncs();
      await step();
      expect(syncs()).toBe(before + 1);
    }
    await journal.close();
  });

  it('declares the durability mode in force on every writer it opens (TJ-DUR-013)', async () => {
    const root = tempDir();
    const turn = await openTurnJournal({ dir: join(root, '_turn_journal'), sessionId: 's', durability: 'group' });
    expect(turn.durability).toBe('group');
    await turn.close();
    const log = await openEventLog({ root, sessionId: 's', durability: 'none' });
    expect(log.durability).toBe('none');
    await log.close();
    const defaultLog = await openEventLog({ root, sessionId: 't' });
    expect(['every', 'group', 'none']).toContain(defaultLog.durability);
    await defaultLog.close();
    const run = await openRunWriter({
      root,
      runId: 'r1',
      header: { startedAt: '2026-05-11T00:00:00Z' },
      durability: 'group',
    });
    expect(run.durability).toBe('group');
    await run.close();
  });
});
