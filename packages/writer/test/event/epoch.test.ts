// The epoch an event-log writer writes (spec §6.7): a new log's first record and every checkpoint carry it, a reopen
// and a compaction keep it, and a log written before epochs gets one at its next checkpoint.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { recoverEventLog } from '@turnjournal/reader';
import { describe, expect, it } from 'vitest';
import { openEventLog } from '../support/internals.js';
import { tempDir } from '../support/temp.js';

const lines = (file: string): Record<string, unknown>[] =>
  readFileSync(file, 'utf8')
    .replace(/\0+$/, '')
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** Appends `n` user messages. */
async function messages(log: Awaited<ReturnType<typeof openEventLog>>, n: number, from = 0): Promise<void> {
  for (let i = 0; i < n; i += 1) await log.appendMessage({ role: 'user', content: `m${from + i}` });
}

describe('the epoch an event log writes (spec §6.7)', () => {
  it('writes a new epoch on the first record and on every checkpoint, and keeps it across a reopen (TJ-EVENT-023, TJ-EVENT-024)', async () => {
    const file = join(tempDir(), 'events.jsonl');
    const log = await openEventLog({ file, checkpointInterval: 3 });
    expect(log.snapshot().epoch).toBeNull();
    await messages(log, 10);
    const epoch = log.snapshot().epoch;
    expect(epoch).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    await log.close();
    const reopened = await openEventLog({ file, checkpointInterval: 3 });
    expect(reopened.snapshot().epoch).toBe(epoch);
    await messages(reopened, 10, 10);
    await reopened.checkpoint();
    await reopened.close();
    const written = lines(file);
    const carrying = written.flatMap((r, i) => ('epoch' in r ? [i] : []));
    const checkpoints = written.flatMap((r, i) => (r.type === 'checkpoint' ? [i] : []));
    expect(checkpoints.length).toBeGreaterThan(3);
    expect(carrying).toEqual([0, ...checkpoints]);
    expect(new Set(written.filter((r) => 'epoch' in r).map((r) => r.epoch))).toEqual(new Set([epoch]));
    // A reader folds the same epoch from the tail (TJ-EVENT-025).
    expect((await recoverEventLog(file)).epoch).toBe(epoch);
  });

  it('gives two new logs two epochs, and takes a caller-chosen one checked for length', async () => {
    const dir = tempDir();
    const epochs: (string | null)[] = [];
    for (const name of ['a.jsonl', 'b.jsonl']) {
      const log = await openEventLog({ file: join(dir, name) });
      await messages(log, 1);
      epochs.push(log.snapshot().epoch);
      await log.close();
    }
    expect(epochs[0]).not.toBe(epochs[1]);
    const chosen = await openEventLog({ file: join(dir, 'c.jsonl'), newEpoch: () => 'host-7' });
    await messages(chosen, 1);
    expect(chosen.snapshot().epoch).toBe('host-7');
    await chosen.close();
    for (const bad of ['', 'x'.repeat(129), 5])
      await expect(
        openEventLog({ file: join(dir, `bad-${String(bad).length}.jsonl`), newEpoch: () => bad as string }),
      ).rejects.toMatchObject({ code: 'invalid_option' });
  });

  it('keeps the epoch through compaction, which keeps a checkpoint that carries it', async () => {
    const file = join(tempDir(), 'events.jsonl');
    const log = await openEventLog({ file, checkpointInterval: 3, clock: () => Date.parse('2026-01-01T00:00:00Z') });
    await messages(log, 12);
    const epoch = log.snapshot().epoch;
    const result = await log.compact({ retentionSeconds: 0, now: Date.parse('2026-02-01T00:00:00Z') });
    expect(result.compacted).toBe(true);
    await log.close();
    expect(lines(file)[0]).toMatchObject({ type: 'checkpoint', epoch });
    expect((await recoverEventLog(file)).epoch).toBe(epoch);
    const reopened = await openEventLog({ file });
    expect(reopened.snapshot().epoch).toBe(epoch);
    await reopened.close();
  });

  it('gives a log written before epochs one at its next checkpoint, not before (TJ-EVENT-024)', async () => {
    const file = join(tempDir(), 'events.jsonl');
    const old = [0, 1, 2].map(
      (seq) =>
        `{"seq":${seq},"ts":"2026-01-01T00:00:0${seq}Z","type":"message_append","payload":{"message":{"role":"user","content":"o${seq}"}}}\n`,
    );
    writeFileSync(file, old.join(''));
    const log = await openEventLog({ file, checkpointInterval: 1000, newEpoch: () => 'adopted' });
    await messages(log, 2);
    expect(log.snapshot().epoch).toBeNull();
    await log.checkpoint();
    expect(log.snapshot().epoch).toBe('adopted');
    await log.close();
    const written = lines(file);
    expect(written.filter((r) => 'epoch' in r).map((r) => r.type)).toEqual(['checkpoint']);
    expect((await recoverEventLog(file)).epoch).toBe('adopted');
  });
});
