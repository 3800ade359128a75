import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { faultyFileSystem } from '../support/faulty-fs.js';
import { nodeFileSystem, openTurnJournal } from '../support/internals.js';
import { tempDir } from '../support/temp.js';

function submittedLine(sessionId: string, turnId: string, content: string): string {
  return `${JSON.stringify({ version: 1, event: 'submitted', turn_id: turnId, session_id: sessionId, created_at: 1, role: 'user', content })}\n`;
}

/**
 * A shard of the session that cannot be read may hold turns: only ENOENT means it was removed since the listing. Taken
 * as removed, its turns are not folded, and a retry of a turn it holds is written a second time (TJ-TURN-003).
 */
describe('a sibling shard that cannot be read (TJ-TURN-017, TJ-TURN-003)', () => {
  for (const errno of ['EACCES', 'EIO', 'EMFILE', 'ELOOP']) {
    it(`fails the open with the shard's path on ${errno}`, async () => {
      const dir = tempDir();
      const sibling = join(dir, 's~b.jsonl');
      appendFileSync(sibling, submittedLine('s', 't1', 'hello'));
      const fs = faultyFileSystem(nodeFileSystem, [{ op: 'open', path: 's~b.jsonl', errno }]);
      const opening = openTurnJournal({ dir, sessionId: 's', shard: 'a', fs });
      await expect(opening).rejects.toMatchObject({
        code: errno === 'ELOOP' ? 'not_regular_file' : 'write_failed',
        errno,
        file: sibling,
      });
    });
  }

  it('fails a retry instead of writing it twice when the shard holding it fails to open', async () => {
    const dir = tempDir();
    const sibling = join(dir, 's~b.jsonl');
    const fs = faultyFileSystem(nodeFileSystem);
    const journal = await openTurnJournal({ dir, sessionId: 's', shard: 'a', fs });
    // Another process submits t1 to its shard; this writer then sees a retry of t1 while that shard fails with EIO.
    appendFileSync(sibling, submittedLine('s', 't1', 'hello'));
    fs.inject({ op: 'open', path: 's~b.jsonl', errno: 'EIO' });
    await expect(journal.submit({ turnId: 't1', content: 'hello' })).rejects.toMatchObject({
      code: 'write_failed',
      errno: 'EIO',
    });
    await journal.close();
    expect(readFileSync(join(dir, 's~a.jsonl'), 'utf8')).not.toContain('"t1"');
  });

  it('takes a shard removed since the listing (ENOENT) as removed', async () => {
    const dir = tempDir();
    appendFileSync(join(dir, 's~b.jsonl'), submittedLine('s', 't1', 'hello'));
    const fs = faultyFileSystem(nodeFileSystem, [{ op: 'open', path: 's~b.jsonl', errno: 'ENOENT' }]);
    const journal = await openTurnJournal({ dir, sessionId: 's', shard: 'a', fs });
    expect(journal.stateOf('t1')).toBeUndefined();
    await journal.close();
  });
});
