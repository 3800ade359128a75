import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkStore, discoverStore } from '../../src/index.js';
import { SessionFolds } from '../../src/store/session-folds.js';
import type { StoreFile } from '../../src/store/store-listing.js';
import { FoldArena } from '../../src/turn/fold-arena.js';
import { readAll } from '../support/temp.js';
import { turnRecord } from '../support/turn-records.js';

// Issue 11, defect 8 (100,000 session files): a store check finishes each session's fold once the last file that
// can hold its records is read, instead of holding every session's open fold until the end of the store.

const jsonl = (values: readonly unknown[]) => values.map((v) => `${JSON.stringify(v)}\n`).join('');

/** A store whose session `s1` has a shard that discovery lists after another session's journal. */
function store(): string {
  const root = mkdtempSync(join(tmpdir(), 'tj-session-folds-'));
  const dir = join(root, '_turn_journal');
  mkdirSync(dir);
  const done = (sid: string, turn: string) => [turnRecord(sid, 'submitted', turn), turnRecord(sid, 'completed', turn)];
  writeFileSync(join(dir, 's1.jsonl'), jsonl(done('s1', 't1')));
  // Sorted by path: s1.jsonl, s10.jsonl, s1~b.jsonl ('.' < '0' < '~').
  writeFileSync(join(dir, 's10.jsonl'), jsonl(done('s10', 't1')));
  writeFileSync(join(dir, 's1~b.jsonl'), jsonl([turnRecord('s1', 'worker_started', 't2')]));
  writeFileSync(join(dir, 's2.jsonl'), jsonl(done('s2', 't1')));
  return root;
}

const sessionOf = (file: StoreFile) => (file.hint.family === 'turn' ? file.hint.sessionId : '');

async function fold(folds: SessionFolds, file: StoreFile): Promise<void> {
  for (const item of await readAll(file.path))
    if (item.kind === 'record')
      folds.foldOf(sessionOf(file)).add(item.record, { file: file.path, sessionId: sessionOf(file) });
  folds.read(file, 'turn');
}

describe('SessionFolds: a store check’s turn folds', () => {
  it('finishes a session’s fold after its last file, and no sooner', async () => {
    const files = discoverStore([store()]).files;
    expect(files.map((f) => f.path.split('/').pop())).toEqual(['s1.jsonl', 's10.jsonl', 's1~b.jsonl', 's2.jsonl']);
    const folds = new SessionFolds(files, sessionOf, new FoldArena(false), { keepTurns: false });
    const open: number[] = [];
    for (const file of files) {
      await fold(folds, file);
      open.push(folds.openFolds);
    }
    // s1 stays open while s10 is read (its shard comes later); every other fold is finished with its only file.
    expect(open).toEqual([1, 1, 0, 0]);
    const sessions = folds.sessions();
    expect(sessions.map((s) => [s.sessionId, s.turnCount])).toEqual([
      ['s1', 2],
      ['s10', 1],
      ['s2', 1],
    ]);
    // s1's t2 has no submitted record: the fold saw both shards before it finished.
    expect(sessions[0]?.findings.map((f) => `${f.code} ${f.turn_id}`)).toEqual(['orphan_turn t2']);
  });

  it('refuses a fold for a session whose files were all read: its derivation is final', async () => {
    const files = discoverStore([store()]).files;
    const folds = new SessionFolds(files, sessionOf, new FoldArena(false), { keepTurns: false });
    const s10 = files[1] as StoreFile;
    await fold(folds, s10);
    expect(() => folds.foldOf('s10')).toThrow(/no file of session "s10" is unread/);
  });

  it('gives clean sessions one shared empty list of findings, and of turns when they are not kept', async () => {
    const check = await checkStore([store()], { keepTurns: false });
    const [s1, s10, s2] = check.sessions;
    expect(s1?.findings).toHaveLength(1);
    expect(s10?.findings).toHaveLength(0);
    expect(s10?.findings).toBe(s2?.findings);
    expect(s10?.turns).toBe(s1?.turns);
    expect(s10?.files).toEqual([check.files[1]?.path]);
  });

  it('derives what a check that keeps the turns derives, shards read apart included (TJ-DERIVE-004)', async () => {
    const check = await checkStore([store()]);
    expect(
      check.sessions.map((s) => [s.sessionId, s.turns.map((t) => `${t.turnId} ${t.state}`), s.files.length]),
    ).toEqual([
      ['s1', ['t1 completed', 't2 worker_started'], 2],
      ['s10', ['t1 completed'], 1],
      ['s2', ['t1 completed'], 1],
    ]);
  });
});
