import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkStore } from '@turnjournal/reader';
import { describe, expect, it } from 'vitest';
import { faultyFileSystem } from '../support/faulty-fs.js';
import { AppendFile, nodeFileSystem, openRunWriter, openTurnJournal } from '../support/internals.js';
import { eventRecord } from '../support/journal.js';
import { tempDir } from '../support/temp.js';

function lines(path: string): Record<string, unknown>[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function outcome(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => 'ok',
    (error: { code?: string }) => error.code ?? 'bare error',
  );
}

/** Issue 11, defect 1: a failed write followed by a pipelined call must leave no orphan and no unpaired record. */
describe('appends queued behind a failed write are refused until the writer re-read its state (TJ-DUR-030)', () => {
  it('TurnJournal: a workerStarted queued behind a failing submit is not written, and the turn is not known', async () => {
    const dir = tempDir();
    const fs = faultyFileSystem(nodeFileSystem);
    const journal = await openTurnJournal({ dir, sessionId: 's1', fs });
    // Twice: the disk is still full when the writer tries the lines without the pre-allocated space (spec §11.6).
    fs.inject({ op: 'write', path: journal.path, errno: 'ENOSPC', times: 2 });
    const submit = journal.submit({ turnId: 't1', content: 'hello' });
    const started = journal.workerStarted('t1');
    const [submitError, startedError] = await Promise.all([
      submit.catch((error: unknown) => error),
      started.catch((error: unknown) => error),
    ]);
    expect(submitError).toMatchObject({ code: 'write_failed', errno: 'ENOSPC', operation: 'write' });
    expect(startedError).toMatchObject({ code: 'append_cancelled', file: journal.path });
    // The rejection comes after the re-read: the writer has forgotten t1, as the file has.
    expect(journal.stateOf('t1')).toBeUndefined();
    expect(lines(journal.path)).toEqual([]);
    // The retry is checked against the file: a step of an unknown turn is refused, a new submit works.
    await expect(journal.workerStarted('t1')).rejects.toMatchObject({ code: 'unknown_turn' });
    await expect(journal.submit({ turnId: 't1', content: 'hello' })).resolves.toMatchObject({ created: true });
    await journal.workerStarted('t1');
    await journal.close();
    expect(lines(journal.path).map((record) => record.event)).toEqual(['submitted', 'worker_started']);
    const check = await checkStore([dir]);
    expect(check.findings.map((finding) => finding.code)).toEqual([]);
  });

  it('TurnJournal: a complete queued behind a failing workerStarted is refused and the turn stays submitted', async () => {
    const dir = tempDir();
    const fs = faultyFileSystem(nodeFileSystem);
    const journal = await openTurnJournal({ dir, sessionId: 's1', fs, durability: 'group' });
    await journal.submit({ turnId: 't1', content: 'hello' });
    fs.inject({ op: 'write', path: journal.path, errno: 'EIO' });
    const results = await Promise.all([
      outcome(journal.workerStarted('t1')),
      outcome(journal.assistantStarted('t1')),
      outcome(journal.complete('t1')),
    ]);
    expect(results[0]).toBe('write_failed');
    // In group mode the later two share the failed write or are cancelled behind it: never written either way.
    for (const result of results.slice(1)) expect(['write_failed', 'append_cancelled']).toContain(result);
    expect(journal.stateOf('t1')).toBe('submitted');
    await journal.workerStarted('t1');
    await journal.close();
    expect(lines(journal.path).map((record) => record.event)).toEqual(['submitted', 'worker_started']);
  });

  it('RunWriter: an llmResponse queued behind a failing llmRequest is not written, and the seq is free again', async () => {
    const root = tempDir();
    const fs = faultyFileSystem(nodeFileSystem);
    const writer = await openRunWriter({ root, runId: 'r1', header: { startedAt: '2026-02-03T12:00:00.000Z' }, fs });
    fs.inject({ op: 'write', path: writer.path, errno: 'ENOSPC' });
    const request = outcome(writer.llmRequest({ seq: 1, input: { messages: [] } }));
    const response = writer.llmResponse({ seq: 1, output: { messages: [] } }).catch((error: unknown) => error);
    expect(await request).toBe('write_failed');
    expect(await response).toMatchObject({ code: 'append_cancelled', file: writer.path });
    expect(writer.openLlmRequests).toEqual([]);
    expect(writer.nextLlmSeq).toBe(1);
    await writer.close();
    expect(lines(writer.path).map((record) => record.type)).toEqual(['header']);
    const check = await checkStore([root]);
    expect(check.findings.map((finding) => finding.code)).toEqual([]);
  });

  it('RunWriter: agent events queued behind a failed one are refused, so no seq is skipped', async () => {
    const root = tempDir();
    const fs = faultyFileSystem(nodeFileSystem);
    const writer = await openRunWriter({ root, runId: 'r2', header: { startedAt: '2026-02-03T12:00:00.000Z' }, fs });
    await writer.agentEvent({ type: 'a' });
    fs.inject({ op: 'write', path: writer.path, errno: 'ENOSPC' });
    const results = await Promise.all([1, 2, 3].map(() => outcome(writer.agentEvent({ type: 'b' }))));
    expect(results).toEqual(['write_failed', 'append_cancelled', 'append_cancelled']);
    expect((await writer.agentEvent({ type: 'c' })).seq).toBe(1);
    await writer.close();
    expect(lines(writer.path).map((record) => record.seq)).toEqual([undefined, 0, 1]);
  });

  it('AppendFile on its own: appends queued behind a failed write are refused; later ones are written', async () => {
    const file = join(tempDir(), 'raw.jsonl');
    const fs = faultyFileSystem(nodeFileSystem);
    const writer = await AppendFile.open(file, { durability: 'every', fs });
    // Twice: the disk is still full when the writer tries the lines without the pre-allocated space (spec §11.6).
    fs.inject({ op: 'write', path: file, errno: 'ENOSPC', times: 2 });
    const results = await Promise.all([0, 1, 2].map((n) => outcome(writer.appendRecord(eventRecord(n)))));
    expect(results).toEqual(['write_failed', 'append_cancelled', 'append_cancelled']);
    await writer.appendRecord(eventRecord(3));
    await writer.close();
    expect(
      lines(file).map((record) => record.seq),
      'eventRecord(n) carries seq n + 1',
    ).toEqual([4]);
  });

  // Only the appends queued when the write failed are refused: one made after its caller saw the failure is written.
  // Before, the drain that failed was still running when such a caller appended again from its rejection handler, so
  // the new append joined it and was refused too, and the next, for as long as the caller kept appending.
  for (const durability of ['every', 'group', 'none'] as const)
    it(`AppendFile on its own (${durability}): a caller awaiting each append has the next one after a failed write written`, async () => {
      const file = join(tempDir(), 'raw.jsonl');
      const fs = faultyFileSystem(nodeFileSystem);
      const writer = await AppendFile.open(file, { durability, fs });
      await writer.appendRecord(eventRecord(0));
      fs.inject({ op: 'write', path: file, errno: 'EIO' });
      const results: string[] = [];
      for (let n = 1; n <= 4; n++) {
        try {
          await writer.appendRecord(eventRecord(n));
          results.push('ok');
        } catch (error) {
          results.push((error as { code: string }).code);
        }
      }
      await writer.close();
      expect(results).toEqual(['write_failed', 'ok', 'ok', 'ok']);
      expect(lines(file).map((record) => record.seq)).toEqual([1, 3, 4, 5]);
    });
});
