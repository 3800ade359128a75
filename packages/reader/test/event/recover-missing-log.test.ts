// A session that never wrote anything has no event log yet: recovering it answers an empty log, as seed 002's reader
// answers an empty message list, instead of throwing ENOENT (issue 41).
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { recoverEventLog } from '@turnjournal/reader';
import { describe, expect, it } from 'vitest';

const tempDir = () => mkdtempSync(join(tmpdir(), 'tj-reader-'));

describe('recoverEventLog of a log that does not exist', () => {
  it('answers an empty log: no messages, no seq, no findings', async () => {
    const dir = tempDir();
    for (const path of [join(dir, 'events.jsonl'), join(dir, 'no-such-session', 'events.jsonl')]) {
      const recovery = await recoverEventLog(path);
      expect(recovery.messages).toEqual([]);
      expect(recovery.lastSeq).toBeNull();
      expect(recovery.findings).toEqual([]);
      expect(recovery.bytesRead).toBe(0);
    }
  });

  it('still refuses what is there but is not a regular file', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'events.jsonl'));
    await expect(recoverEventLog(join(dir, 'events.jsonl'))).rejects.toThrow();
    writeFileSync(
      join(dir, 'plain.jsonl'),
      '{"seq":0,"ts":"2026-01-01T00:00:00Z","type":"message_append","payload":{"message":{"role":"user","content":"hi"}}}\n',
    );
    expect((await recoverEventLog(join(dir, 'plain.jsonl'))).lastSeq).toBe(0);
  });
});
