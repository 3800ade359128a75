import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkStore } from '@turnjournal/reader';
import { describe, expect, it } from 'vitest';
import { type FileSystem, nodeFileSystem, openTurnJournal } from './support/internals.js';
import { findingCodes, tempDir } from './support/temp.js';

describe('openTurnJournal: the lifecycle API (spec §5, §10)', () => {
  it('writes submit → worker → assistant → complete that check derives as completed, with no findings', async () => {
    const dir = join(tempDir(), '_turn_journal');
    const journal = await openTurnJournal({ dir, sessionId: 's1', clock: () => 1_778_458_282_123 });
    expect(journal.durability).toBe('every');
    expect(journal.opened.created).toBe(true);
    const { turnId, created } = await journal.submit({ content: 'hello', streamId: 'st-1', model: 'm' });
    expect(created).toBe(true);
    expect(turnId).toMatch(/^20260511T001122Z-[0-9a-f]{12}$/);
    await journal.workerStarted(turnId);
    await journal.assistantStarted(turnId, { assistantMessageIndex: 3 });
    await journal.complete(turnId, { assistantMessageIndex: 3 });
    await journal.close();

    const lines = readFileSync(join(dir, 's1.jsonl'), 'utf8').split('\n');
    expect(lines).toHaveLength(5);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ event: 'submitted', session_id: 's1', stream_id: 'st-1' });
    expect(JSON.parse(lines[3] as string)).toMatchObject({ event: 'completed', stream_id: 'st-1', terminal: true });
    const check = await checkStore([dir]);
    expect(check.findings).toEqual([]);
    expect(check.sessions[0]?.turns.map((t) => [t.turnId, t.state])).toEqual([[turnId, 'completed']]);
  });

  it('recognises a retried submission by turn id and content, and refuses the same id with other content', async () => {
    const dir = tempDir();
    const journal = await openTurnJournal({ dir, sessionId: 's2' });
    const first = await journal.submit({ content: 'same', turnId: 'turn-1' });
    const retry = await journal.submit({ content: 'same', turnId: 'turn-1' });
    expect([first.created, retry.created]).toEqual([true, false]);
    await expect(journal.submit({ content: 'other', turnId: 'turn-1' })).rejects.toMatchObject({
      code: 'turn_id_conflict',
    });
    await journal.close();
    // A retry after a restart is recognised from the file.
    const reopened = await openTurnJournal({ dir, sessionId: 's2' });
    expect((await reopened.submit({ content: 'same', turnId: 'turn-1' })).created).toBe(false);
    await reopened.close();
    expect(readFileSync(join(dir, 's2.jsonl'), 'utf8').trim().split('\n')).toHaveLength(1);
    expect(await findingCodes([dir])).toEqual([]);
  });

  it('refuses a content that differs from the first by a lone surrogate where the other has U+FFFD (TJ-TURN-012)', async () => {
    const dir = tempDir();
    const journal = await openTurnJournal({ dir, sessionId: 'lone' });
    await journal.submit({ content: 'half \ud800 a pair', turnId: 'lone-1' });
    // After the digest is computed (the next turn of the event loop), not from the content held until then.
    await new Promise((resolve) => setImmediate(resolve));
    await expect(journal.submit({ content: 'half \ufffd a pair', turnId: 'lone-1' })).rejects.toMatchObject({
      code: 'turn_id_conflict',
    });
    expect((await journal.submit({ content: 'half \ud800 a pair', turnId: 'lone-1' })).created).toBe(false);
    await journal.close();
    // And from the file, after a restart.
    const reopened = await openTurnJournal({ dir, sessionId: 'lone' });
    await expect(reopened.submit({ content: 'half \ufffd a pair', turnId: 'lone-1' })).rejects.toMatchObject({
      code: 'turn_id_conflict',
    });
    expect((await reopened.submit({ content: 'half \ud800 a pair', turnId: 'lone-1' })).created).toBe(false);
    await reopened.close();
    expect(readFileSync(join(dir, 'lone.jsonl'), 'utf8').trim().split('\n')).toHaveLength(1);
  });

  it('rejects illegal transitions and writes nothing for them', async () => {
    const dir = tempDir();
    const journal = await openTurnJournal({ dir, sessionId: 's3' });
    const { turnId } = await journal.submit({ content: 'x' });
    await journal.assistantStarted(turnId);
    await expect(journal.workerStarted(turnId)).rejects.toMatchObject({ code: 'illegal_transition' });
    await expect(journal.assistantStarted(turnId)).rejects.toMatchObject({ code: 'illegal_transition' });
    await journal.interrupt(turnId, 'cancelled');
    await expect(journal.complete(turnId)).rejects.toMatchObject({ code: 'illegal_transition' });
    await expect(journal.interrupt(turnId, 'cancelled')).rejects.toMatchObject({ code: 'illegal_transition' });
    await expect(journal.workerStarted('never-submitted')).rejects.toMatchObject({ code: 'unknown_turn' });
    await journal.close();
    const events = readFileSync(join(dir, 's3.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).event);
    expect(events).toEqual(['submitted', 'assistant_started', 'interrupted']);
  });

  it('validates session ids, shards and turn ids before building any path', async () => {
    const dir = tempDir();
    for (const sessionId of ['../escape', 'a/b', '', '.', '..', 'a~b', 'x'.repeat(129), 'nul\u0000']) {
      await expect(openTurnJournal({ dir, sessionId })).rejects.toMatchObject({ code: 'invalid_identifier' });
    }
    await expect(openTurnJournal({ dir, sessionId: 'ok', shard: '../x' })).rejects.toMatchObject({
      code: 'invalid_identifier',
    });
    const journal = await openTurnJournal({ dir, sessionId: 'ok' });
    await expect(journal.submit({ content: 'x', turnId: '../../etc' })).rejects.toMatchObject({
      code: 'invalid_identifier',
    });
    await expect(journal.submit({ content: 'x', extra: { content: 'y' } })).rejects.toMatchObject({
      code: 'invalid_record',
    });
    await journal.close();
  });

  it('lets a worker in another shard advance a turn that this shard submitted', async () => {
    const dir = tempDir();
    const server = await openTurnJournal({ dir, sessionId: 's4', shard: '100' });
    const worker = await openTurnJournal({ dir, sessionId: 's4', shard: '200' });
    const { turnId } = await server.submit({ content: 'shared', turnId: 't-shared', streamId: 'st' });
    await worker.workerStarted(turnId);
    await worker.complete(turnId);
    expect(worker.stateOf(turnId)).toBe('completed');
    // The server's writer learns of the completion from the other shard when asked to do something with the turn.
    await server.refreshSiblings();
    await expect(server.interrupt(turnId, 'cancelled')).rejects.toMatchObject({ code: 'illegal_transition' });
    await Promise.all([server.close(), worker.close()]);
    const check = await checkStore([dir]);
    expect(check.findings).toEqual([]);
    expect(check.sessions[0]?.turns[0]?.state).toBe('completed');
  });

  it('refuses `none` durability for turn journals (TJ-DUR-016)', async () => {
    await expect(
      openTurnJournal({ dir: tempDir(), sessionId: 's', durability: 'none' as unknown as 'every' }),
    ).rejects.toMatchObject({ code: 'invalid_option' });
  });
});

describe('overlapping submissions of one turn id (TJ-TURN-012)', () => {
  it('answers the retry only after the first record is durable, and writes one record', async () => {
    const dir = tempDir();
    const journal = await openTurnJournal({ dir, sessionId: 'race' });
    const order: string[] = [];
    const first = journal.submit({ content: 'once', turnId: 'same' }).then((r) => order.push(`first:${r.created}`));
    const second = journal.submit({ content: 'once', turnId: 'same' }).then((r) => order.push(`second:${r.created}`));
    await Promise.all([first, second]);
    expect(order).toEqual(['first:true', 'second:false']);
    await journal.close();
    expect(readFileSync(join(dir, 'race.jsonl'), 'utf8').trim().split('\n')).toHaveLength(1);
  });

  it('answers each of several overlapping retries only after the first record is durable, and writes one record', async () => {
    const dir = tempDir();
    let synced = 0;
    const fs: FileSystem = {
      ...nodeFileSystem,
      fdatasync: (fd) => nodeFileSystem.fdatasync(fd).then(() => void synced++),
    };
    const journal = await openTurnJournal({ dir, sessionId: 'chain', fs });
    const answers = await Promise.all(
      [1, 2, 3, 4].map((n) =>
        journal.submit({ content: 'once', turnId: 'same' }).then((r) => `${n}:${r.created}:${synced}`),
      ),
    );
    expect(answers).toEqual(['1:true:1', '2:false:1', '3:false:1', '4:false:1']);
    await expect(journal.submit({ content: 'other', turnId: 'same' })).rejects.toMatchObject({
      code: 'turn_id_conflict',
    });
    await journal.close();
    expect(readFileSync(join(dir, 'chain.jsonl'), 'utf8').trim().split('\n')).toHaveLength(1);
  });

  it('recognises a retry, and refuses other content, before the first submission has its digest (TJ-TURN-012)', async () => {
    const dir = tempDir();
    // Syncs that settle at once: the first submit resolves before the event loop turns, so the content's digest
    // (computed off the submit path, on the next turn) is still pending when the retries arrive.
    const fs: FileSystem = { ...nodeFileSystem, fdatasync: async () => undefined };
    const journal = await openTurnJournal({ dir, sessionId: 'early', fs });
    await journal.submit({ content: 'first words', turnId: 'early-1' });
    await expect(journal.submit({ content: 'other words', turnId: 'early-1' })).rejects.toMatchObject({
      code: 'turn_id_conflict',
    });
    expect((await journal.submit({ content: 'first words', turnId: 'early-1' })).created).toBe(false);
    await journal.close();
    expect(readFileSync(join(dir, 'early.jsonl'), 'utf8').trim().split('\n')).toHaveLength(1);
  });
});

describe('call order (TJ-DUR-006)', () => {
  it('writes overlapping submissions and steps in call order, even when some must read the other shards first', async () => {
    const dir = tempDir();
    const other = await openTurnJournal({ dir, sessionId: 'order', shard: 'other' });
    await other.submit({ content: 'elsewhere', turnId: 'from-other' });
    const journal = await openTurnJournal({ dir, sessionId: 'order', shard: 'mine' });
    const calls: Promise<unknown>[] = [];
    for (let i = 0; i < 30; i++) calls.push(journal.submit({ content: `c${i}`, turnId: `t-${i}` }));
    calls.push(journal.workerStarted('from-other'));
    for (let i = 30; i < 40; i++) calls.push(journal.submit({ content: `c${i}` }));
    await Promise.all(calls);
    await Promise.all([journal.close(), other.close()]);
    const written = readFileSync(join(dir, 'order~mine.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { event: string; turn_id: string; content?: string });
    expect(written.map((r) => r.content ?? r.turn_id)).toEqual([
      ...Array.from({ length: 30 }, (_, i) => `c${i}`),
      'from-other',
      ...Array.from({ length: 10 }, (_, i) => `c${30 + i}`),
    ]);
  });
});
