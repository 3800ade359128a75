// The run index of checkpoints (spec §6.6, TJ-EVENT-019, TJ-EVENT-020): opening an event log learns every run from
// the last checkpoint and the records after it, so its cost follows the tail, not the log; a log written before the
// index existed is still read, by a scan of the whole file, and its next checkpoint carries the index.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { replayEventLog } from '@turnjournal/reader';
import { type FileSystem, openEventLog, type WriterError } from '@turnjournal/writer';
import { nodeFileSystem } from '@turnjournal/writer/file-system';
import { afterEach, describe, expect, it } from 'vitest';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tj-runidx-'));
  dirs.push(dir);
  return join(dir, 'events.jsonl');
}

/** The real file system, counting the bytes read. */
function counting(): { fs: FileSystem; bytesRead: () => number } {
  let bytes = 0;
  const fs: FileSystem = {
    ...nodeFileSystem,
    read: async (fd, buffer, offset, length, position) => {
      const n = await nodeFileSystem.read(fd, buffer, offset, length, position);
      bytes += n;
      return n;
    },
  };
  return { fs, bytesRead: () => bytes };
}

/** A log of `runs` finished runs (the first acknowledged by client c1), each with a long answer. */
async function longLog(file: string, runs: number): Promise<void> {
  const log = await openEventLog({ file, durability: 'none', checkpointInterval: 50 });
  for (let r = 0; r < runs; r += 1) {
    await log.chatStarted({ requestId: `run-${r}`, content: `question ${r}` });
    await log.segmentStarted({ requestId: `run-${r}`, messageId: `run-${r}.a1` });
    for (let d = 0; d < 40; d += 1)
      await log.delta({ requestId: `run-${r}`, messageId: `run-${r}.a1`, text: 'x'.repeat(200) });
    await log.chatDone({ requestId: `run-${r}` });
    if (r === 0) await log.ack('run-0', { clientId: 'c1' });
  }
  await log.close();
}

describe('checkpoint run index (TJ-EVENT-019, TJ-EVENT-020)', () => {
  it('each checkpoint lists every run before it with outcome and acks', async () => {
    const file = tempFile();
    await longLog(file, 3);
    const replay = await replayEventLog(file);
    if (replay.kind !== 'records') throw new Error('expected records');
    const checkpoints = replay.records.filter((r) => r.value.type === 'checkpoint');
    const last = checkpoints.at(-1)?.value as { seq: number; payload: { runs: unknown[] } };
    const before = replay.records.filter((r) => (r.value.seq as number) < last.seq);
    const started = before.filter((r) => r.value.type === 'chat.started').map((r) => r.value.payload);
    expect(last.payload.runs.map((r) => (r as { request_id: string }).request_id)).toEqual(
      started.map((p) => (p as { request_id: string }).request_id),
    );
    expect(last.payload.runs[0]).toMatchObject({
      request_id: 'run-0',
      started_seq: 0,
      outcome: 'done',
      finished_seq: 42,
      acked: true,
      acked_by: ['c1'],
    });
  });

  it('opening reads the tail only, and still knows every request id of the log (TJ-EVENT-010)', async () => {
    const file = tempFile();
    await longLog(file, 60); // about 500 KiB
    const size = readFileSync(file).length;
    const { fs, bytesRead } = counting();
    const log = await openEventLog({ file, fs });
    // The backward scan to the last checkpoint, that checkpoint and the records after it: a small part of the file.
    expect(bytesRead()).toBeLessThan(size / 4);
    const runs = log.runs();
    expect(runs.size).toBe(60);
    expect(runs.get('run-0')).toMatchObject({ finish: 'done', acked: true });
    expect([...(runs.get('run-0')?.ackedBy ?? [])]).toEqual(['c1']);
    const refusal = (await log.chatStarted({ requestId: 'run-0' }).catch((e: unknown) => e)) as WriterError;
    expect(refusal.code).toBe('illegal_transition');
    expect(refusal.message).toContain('TJ-EVENT-010');
    await log.close();
  });

  it('a log whose checkpoints carry no index (written before TJ-EVENT-019) is scanned whole, and indexed from its next checkpoint', async () => {
    const file = tempFile();
    await longLog(file, 4);
    // Strip the index from every checkpoint: the file an older writer left.
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    const old = lines.map((line) => {
      const value = JSON.parse(line) as { type: string; payload: { runs?: unknown } };
      if (value.type !== 'checkpoint') return line;
      delete value.payload.runs;
      return JSON.stringify(value);
    });
    writeFileSync(file, `${old.join('\n')}\n`);
    const replay = await replayEventLog(file);
    expect(replay.findings.filter((f) => f.severity !== 'info')).toEqual([]);

    const log = await openEventLog({ file });
    expect([...log.runs().keys()]).toEqual(['run-0', 'run-1', 'run-2', 'run-3']);
    expect((await log.chatStarted({ requestId: 'run-1' }).catch((e: unknown) => e)) as WriterError).toMatchObject({
      code: 'illegal_transition',
    });
    await log.checkpoint();
    await log.close();
    const tail = readFileSync(file, 'utf8').trimEnd().split('\n').at(-1) as string;
    const checkpoint = JSON.parse(tail) as { type: string; payload: { runs: { request_id: string }[] } };
    expect(checkpoint.type).toBe('checkpoint');
    expect(checkpoint.payload.runs.map((r) => r.request_id)).toEqual(['run-0', 'run-1', 'run-2', 'run-3']);
  });
});
