import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AppendFile, openEventLog, openRunWriter, openTurnJournal } from '../support/internals.js';
import { eventRecord } from '../support/journal.js';
import { recordingFileSystem } from '../support/recording-fs.js';
import { tempDir } from '../support/temp.js';

/** Issue 11, defect 2: a reused descriptor number would close an unrelated file. */
describe('overlapping close() calls close the descriptor once', () => {
  it('AppendFile', async () => {
    const file = join(tempDir(), 'raw.jsonl');
    const fs = recordingFileSystem();
    const writer = await AppendFile.open(file, { durability: 'every', fs });
    const append = writer.appendRecord(eventRecord(0));
    await Promise.all([writer.close(), writer.close(), append]);
    await writer.close();
    expect(fs.closes.get(file)).toBe(1);
  });

  it('EventLog', async () => {
    const file = join(tempDir(), 'events.jsonl');
    const fs = recordingFileSystem();
    const log = await openEventLog({ file, fs });
    const append = log.appendMessage({ role: 'user', content: 'hi' });
    await Promise.all([log.close(), log.close(), append]);
    expect(fs.closes.get(file)).toBe(1);
  });

  it('RunWriter', async () => {
    const fs = recordingFileSystem();
    const writer = await openRunWriter({
      root: tempDir(),
      runId: 'r1',
      header: { startedAt: '2026-02-03T12:00:00.000Z' },
      fs,
    });
    const append = writer.agentEvent({ type: 'a' });
    await Promise.all([writer.close(), writer.close(), append]);
    expect(fs.closes.get(writer.path)).toBe(1);
  });

  it('TurnJournal', async () => {
    const fs = recordingFileSystem();
    const journal = await openTurnJournal({ dir: tempDir(), sessionId: 's1', fs });
    const submit = journal.submit({ content: 'hi' });
    await Promise.all([journal.close(), journal.close(), submit]);
    expect(fs.closes.get(journal.path)).toBe(1);
  });
});

/**
 * Issue 11, defect 3, and issue 15: every append hints `awaited`, so the real file system writes small lines in one
 * trip — on the durable path, and on the buffered path of a live session's deltas, where a thread-pool trip per delta
 * was nine tenths of its cost.
 */
describe('appends pass awaited to the file system', () => {
  for (const durability of ['every', 'group', 'none'] as const) {
    it(`EventLog (${durability})`, async () => {
      const file = join(tempDir(), 'events.jsonl');
      const fs = recordingFileSystem();
      const log = await openEventLog({ file, fs, durability });
      await log.appendMessage({ role: 'user', content: 'hi' });
      await log.close();
      const writes = fs.writes.filter((write) => write.path === file);
      expect(writes.length).toBeGreaterThan(0);
      for (const write of writes) expect(write.options).toEqual({ awaited: true });
    });
  }
});

/**
 * `none` mode: appends made in one synchronous run share one write (the drain waits a microtask before writing), since
 * small writes are synchronous and would otherwise go out one by one (the bench's append-none figure depends on it).
 */
describe('none mode batches the appends of one synchronous run into one write', () => {
  it('ten appends made together are one write; ten appends awaited one by one are ten', async () => {
    const file = join(tempDir(), 'events.jsonl');
    const fs = recordingFileSystem();
    const appendFile = await AppendFile.open(file, { durability: 'none', fs });
    const record = (n: number) => eventRecord(n);
    await Promise.all(Array.from({ length: 10 }, (_, n) => appendFile.appendRecord(record(n))));
    const together = fs.writes.filter((w) => w.path === file).length;
    for (let n = 10; n < 20; n += 1) await appendFile.appendRecord(record(n));
    const oneByOne = fs.writes.filter((w) => w.path === file).length - together;
    await appendFile.close();
    expect(together).toBe(1);
    expect(oneByOne).toBe(10);
    const seqs = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).seq);
    expect(seqs).toEqual([...Array(20).keys()].map((n) => n + 1));
  });

  it('callers that keep 8 appends in flight get writes of 8 records, not one write per record', async () => {
    const file = join(tempDir(), 'events.jsonl');
    const fs = recordingFileSystem();
    const appendFile = await AppendFile.open(file, { durability: 'none', fs });
    const inFlight: Promise<unknown>[] = [];
    for (let n = 0; n < 64; n += 1) {
      if (n >= 8) await inFlight[n % 8];
      inFlight[n % 8] = appendFile.appendRecord(eventRecord(n));
    }
    await Promise.all(inFlight);
    const writes = fs.writes.filter((w) => w.path === file).length;
    await appendFile.close();
    expect(writes).toBe(8);
  });
});
