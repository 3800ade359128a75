import { appendFileSync, statSync as realStatSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type FileStat,
  type FileSystem,
  nodeFileSystem,
  openTurnJournal,
  withSynchronousStat,
} from '../support/internals.js';
import { tempDir } from '../support/temp.js';

/**
 * The real file system, except that `stat` of `dir` reports the change time the test sets (or none), and listings,
 * `stat`s and writes are counted: what the writer's cache of the session's other shards decides is then visible and
 * deterministic. With `synchronous`, it has a synchronous twin of `stat` too (as the real file system does), counted
 * apart: the writer's check that needs no waiting uses it.
 */
function controlledDirectory(dir: string, initialCtimeMs: number | undefined, synchronous = false) {
  const state = {
    ctimeMs: initialCtimeMs,
    listings: 0,
    stats: 0,
    statsNow: 0,
    writes: 0,
    opens: new Map<string, number>(),
  };
  const controlled = (path: string, real: FileStat): FileStat => {
    if (path !== dir) return real;
    const { ctimeMs: _ignored, ...rest } = real;
    return state.ctimeMs === undefined ? rest : { ...rest, ctimeMs: state.ctimeMs };
  };
  const fs: FileSystem = {
    ...nodeFileSystem,
    async stat(path: string): Promise<FileStat> {
      state.stats += 1;
      return controlled(path, await nodeFileSystem.stat(path));
    },
    async readdir(path: string): Promise<string[]> {
      if (path === dir) state.listings += 1;
      return nodeFileSystem.readdir(path);
    },
    open(path, mode) {
      state.opens.set(path, (state.opens.get(path) ?? 0) + 1);
      return nodeFileSystem.open(path, mode);
    },
    write(fd, buffer, offset, length, position, options) {
      state.writes += 1;
      return nodeFileSystem.write(fd, buffer, offset, length, position, options);
    },
  };
  if (synchronous)
    withSynchronousStat(fs, (path) => {
      state.statsNow += 1;
      return controlled(path, statSync(path));
    });
  return { fs, state };
}

/** The real `stat`, synchronously, as the file system layer reports it. */
function statSync(path: string): FileStat {
  const stats = realStatSync(path);
  return { size: stats.size, ino: stats.ino, isDirectory: stats.isDirectory(), ctimeMs: stats.ctimeMs };
}

function submittedLine(sessionId: string, turnId: string, content: string): string {
  return `${JSON.stringify({ version: 1, event: 'submitted', turn_id: turnId, session_id: sessionId, created_at: 1, role: 'user', content })}\n`;
}

const LONG_AGO = Date.now() - 3_600_000;

describe.each([
  ['through the asynchronous stat', false],
  ['with a synchronous stat', true],
])(
  'the other shards of a session are checked before a caller-supplied turn id is treated as new (TJ-TURN-012), %s',
  (_how, synchronous) => {
    it('lists the directory once while its change time stays old and the same, and again when it moves', async () => {
      const dir = tempDir();
      const { fs, state } = controlledDirectory(dir, LONG_AGO, synchronous);
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
      const { fs, state } = controlledDirectory(dir, LONG_AGO, synchronous);
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

    it('opens a shard that holds nothing once, not again for every new turn id, and reads it once it grows', async () => {
      const dir = tempDir();
      const shard = join(dir, 'empty~b.jsonl');
      writeFileSync(shard, '');
      const { fs, state } = controlledDirectory(dir, LONG_AGO, synchronous);
      const journal = await openTurnJournal({ dir, sessionId: 'empty', shard: 'a', fs });
      expect(state.opens.get(shard)).toBe(1);
      for (let i = 0; i < 3; i++) await journal.submit({ content: `c${i}`, turnId: `t-${i}` });
      expect(state.opens.get(shard)).toBe(1);
      appendFileSync(shard, submittedLine('empty', 'late', 'from b'));
      expect((await journal.submit({ content: 'from b', turnId: 'late' })).created).toBe(false);
      expect(state.opens.get(shard)).toBe(2);
      await journal.close();
    });

    it('does not trust a listing taken within the clock margin of the last change: a shard created in the same tick is found', async () => {
      const dir = tempDir();
      // The change time equals "now": an entry added right after the listing could carry the same stamp.
      const { fs, state } = controlledDirectory(dir, Date.now() + 60_000, synchronous);
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
      const { fs, state } = controlledDirectory(dir, undefined, synchronous);
      const journal = await openTurnJournal({ dir, sessionId: 'nostamp', shard: 'a', fs });
      const afterOpen = state.listings;
      for (let i = 0; i < 3; i++) await journal.submit({ content: `c${i}`, turnId: `t-${i}` });
      expect(state.listings).toBe(afterOpen + 3);
      await journal.close();
    });
  },
);

describe('the check of the other shards when the file system has a synchronous stat', () => {
  it('writes a new caller-given turn id in the call itself, after a synchronous stat of the directory and of each known shard', async () => {
    const dir = tempDir();
    appendFileSync(join(dir, 'now~b.jsonl'), submittedLine('now', 'elsewhere', 'b'));
    const { fs, state } = controlledDirectory(dir, LONG_AGO, true);
    const journal = await openTurnJournal({ dir, sessionId: 'now', shard: 'a', fs });
    const before = { ...state };
    const submitted = journal.submit({ content: 'hello', turnId: 't-1' });
    // Before the call returned: no promise reaction ran between the check and the write.
    expect(state.writes).toBe(before.writes + 1);
    expect(state.statsNow).toBe(before.statsNow + 2);
    expect(state.stats).toBe(before.stats);
    expect(await submitted).toMatchObject({ turnId: 't-1', created: true });
    // A step of a turn no shard holds is refused on the same check, without a read.
    await expect(journal.workerStarted('never-submitted')).rejects.toMatchObject({ code: 'unknown_turn' });
    expect(state.stats).toBe(before.stats);
    expect(state.listings).toBe(before.listings);
    await journal.close();
  });

  it('leaves the decision to a read of the shards that is queued or running: the write comes after it', async () => {
    const dir = tempDir();
    const { fs, state } = controlledDirectory(dir, LONG_AGO, true);
    const journal = await openTurnJournal({ dir, sessionId: 'queued', shard: 'a', fs });
    const writes = state.writes;
    const refreshed = journal.refreshSiblings();
    const submitted = journal.submit({ content: 'hello', turnId: 't-1' });
    expect(state.writes).toBe(writes);
    await refreshed;
    expect((await submitted).created).toBe(true);
    expect(state.writes).toBe(writes + 1);
    await journal.close();
  });
});

describe('the check of the other shards on the real file system (TJ-TURN-012)', () => {
  it('finds a shard another writer created after this one opened', async () => {
    const dir = tempDir();
    const mine = await openTurnJournal({ dir, sessionId: 'real', shard: 'a' });
    await mine.submit({ content: 'x', turnId: 'own' });
    const other = await openTurnJournal({ dir, sessionId: 'real', shard: 'b' });
    await other.submit({ content: 'shared', turnId: 'elsewhere' });
    expect((await mine.submit({ content: 'shared', turnId: 'elsewhere' })).created).toBe(false);
    await Promise.all([mine.close(), other.close()]);
  });
});
