// TJ-EVENT-010 across reopen: the writer refuses a chat.started for a request id whose run lies before the tail that
// the opening recovery folds (it used to know only the tail, and accepted the old id).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { replayEventLog } from '@turnjournal/reader';
import { openEventLog, WriterError } from '@turnjournal/writer';
import { afterEach, describe, expect, it } from 'vitest';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('chat.started after reopen (TJ-EVENT-010, TJ-EVENT-017)', () => {
  it('refuses a request id that only the part before the folded tail holds', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tj-reqid-'));
    dirs.push(dir);
    const file = join(dir, 'events.jsonl');
    const first = await openEventLog({ file, checkpointInterval: 3 });
    await first.chatStarted({ requestId: 'old-run', content: 'hi' });
    await first.chatDone({ requestId: 'old-run' });
    await first.chatStarted({ requestId: 'later-run', content: 'again' });
    await first.chatDone({ requestId: 'later-run' });
    for (let i = 0; i < 10; i += 1) await first.appendMessage({ role: 'user', content: `m${i}` });
    await first.close();

    const reopened = await openEventLog({ file, checkpointInterval: 3 });
    expect(reopened.recovery.startCursor).toBeGreaterThan(0);
    const refusal = await reopened.chatStarted({ requestId: 'old-run' }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(WriterError);
    expect((refusal as WriterError).code).toBe('illegal_transition');
    expect((refusal as WriterError).message).toContain('TJ-EVENT-010');
    await reopened.chatStarted({ requestId: 'new-run' });
    await reopened.close();

    const replay = await replayEventLog(file);
    expect(replay.findings.map((f) => f.code)).not.toContain('duplicate_run_start');
  });
});
