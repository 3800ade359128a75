import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type FileStat, type FileSystem, nodeFileSystem, openTurnJournal } from '../support/internals.js';
import { tempDir } from '../support/temp.js';

/**
 * The real file system, except that `stat` of `dir` reports the change time the test sets (or none), and listings of
 * `dir` are counted: what the writer's cache of the session's other shards decides is then visible and deterministic.
 */
function controlledDirectory(dir: string, initialCtimeMs: number | undefined) {
  const state = { ctimeMs: initialCtimeMs, listings: 0 };
  const fs: FileSystem = {
    ...nodeFileSystem,
    async stat(path: string): Promise<FileStat> {
      const real = await nodeFileSystem.stat(path);
      if (path !== dir) return real;
      const { ctimeMs: _ignored, ...rest } = real;
      return state.ctimeMs === undefined ? rest : { ...rest, ctimeMs: state.ctimeMs };
    },
    async readdir(path: string): Promise<string[]> {
      if (path === dir) state.listings += 1;
      return nodeFileSystem.readdir(path);
    },
  };
  return { fs, state };
}

function submittedLine(sessionId: string, turnId: string, content: string): string {
  return `${JSON.stringify({ version: 1, event: 'submitted', turn_id: turnId, session_id: sessionId, created_at: 1, role: 'user', content })}\n`;
}

const LONG_AGO = Date.now() - 3_600_000;

describe('the other shards of a session are checked before a caller-supplied turn id is treated as new (TJ-TURN-012)', () => {
  it('lists the directory once while its change time stays old and the same, and again when it moves', async () => {
    const dir = tempDir();
    const { fs, state } = controlledDirectory(dir, LONG_AGO);
    const journal = await openTurnJournal({ dir, sessionId: 'cache', shard: 'a', fs });
    const afterOpen = state.listings;
    for (let i = 0; i < 5; i++) await journal.submit({ content: `c${i}`, turnId: `t-${i}` });
    expect(state.listings).toBe(afterOpen);

    // Another process creates its shard with the retried turn: the directory's change time moves.
    appendFileSync(join(dir, 'cache~b.jsonl'), submittedLine('cache', 'retried', 'hello'));
    state.ctimeMs = LONG_AGO + 1;
    const retry = await journal.submit({ content: 'hello', turnId: 'retried' });
    expect(retry.created).toBe(false);
    expect(state.listings).toBe(afterOpen + 1);
    await journal.close();
  });

  it('sees what a known shard appended without listing the directory again', async () => {
    const dir = tempDir();
    appendFileSync(join(dir, 'grow~b.jsonl'), submittedLine('grow', 'first', 'one'));
    const { fs, state } = controlledDirectory(dir, LONG_AGO);
    const journal = await openTurnJournal({ dir, sessionId: 'grow', shard: 'a', fs });
    expect(journal.stateOf('first')).toBe('submitted');
    const listings = state.listings;
    appendFileSync(join(dir, 'grow~b.jsonl'), submittedLine('grow', 'second', 'two'));
    await expect(journal.submit({ content: 'other', turnId: 'second' })).rejects.toMatchObject({
      code: 'turn_id_conflict',
    });
    expect(state.listings).toBe(listings);
    await journal.close();
  });

  it('does not trust a listing taken within the clock margin of the last change: a shard created in the same tick is found', async () => {
    const dir = tempDir();
    // The change time equals "now": an entry added right after the listing could carry the same stamp.
    const { fs, state } = controlledDirectory(dir, Date.now() + 60_000);
    const journal = await openTurnJournal({ dir, sessionId: 'racy', shard: 'a', fs });
    const afterOpen = state.listings;
    await journal.submit({ content: 'x', turnId: 't-1' });
    appendFileSync(join(dir, 'racy~b.jsonl'), submittedLine('racy', 'same-tick', 'hi'));
    expect((await journal.submit({ content: 'hi', turnId: 'same-tick' })).created).toBe(false);
    expect(state.listings).toBe(afterOpen + 2);
    await journal.close();
  });

  it('lists the directory every time when the file system reports no change time', async () => {
    const dir = tempDir();
    const { fs, state } = controlledDirectory(dir, undefined);
    const journal = await openTurnJournal({ dir, sessionId: 'nostamp', shard: 'a', fs });
    const afterOpen = state.listings;
    for (let i = 0; i < 3; i++) await journal.submit({ content: `c${i}`, turnId: `t-${i}` });
    expect(state.listings).toBe(afterOpen + 3);
    await journal.close();
  });

  it('on the real file system, finds a shard another writer created after this one opened', async () => {
    const dir = tempDir();
    const mine = await openTurnJournal({ dir, sessionId: 'real', shard: 'a' });
    await mine.submit({ content: 'x', turnId: 'own' });
    const other = await openTurnJournal({ dir, sessionId: 'real', shard: 'b' });
    await other.submit({ content: 'shared', turnId: 'elsewhere' });
    expect((await mine.submit({ content: 'shared', turnId: 'elsewhere' })).created).toBe(false);
    await Promise.all([mine.close(), other.close()]);
  });
});
