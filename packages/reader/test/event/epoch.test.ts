// The epoch of an event log (spec §6.7): what the fold derives from the `epoch` envelope members, what checkpoint
// recovery derives from the tail alone, what a conflict is, and how replay answers a cursor of another history.
import { describe, expect, it } from 'vitest';
import { recoverEventLog } from '../../src/event/recover-event-log.js';
import { replayEventLog } from '../../src/event/replay.js';
import { tempFile } from '../support/temp.js';
import { ev, foldFile, line, msg } from './event-log.js';

const A = 'c0ffee00-0000-4000-8000-00000000000a';
const B = 'c0ffee00-0000-4000-8000-00000000000b';
const withEpoch = (record: Record<string, unknown>, epoch: unknown) => ({ ...record, epoch });
const checkpoint = (seq: number, messages: unknown[], epoch?: string) =>
  withEpoch(ev(seq, 'checkpoint', { messages }), epoch);
const append = (seq: number, content: string) => ev(seq, 'message_append', { message: msg('user', content) });

/** The epoch by the whole-file fold and by checkpoint recovery, and the fold's finding codes. */
async function epochOf(records: readonly Record<string, unknown>[]) {
  const path = tempFile(records.map(line).join(''));
  const folded = await foldFile(path);
  const recovered = await recoverEventLog(path);
  return { fold: folded.epoch, recovery: recovered.epoch, codes: folded.findings.map((f) => f.code) };
}

describe('the epoch of an event log (spec §6.7)', () => {
  it('is the epoch of the first record, kept by the checkpoints that repeat it (TJ-EVENT-025)', async () => {
    const log = [withEpoch(append(0, 'a'), A), append(1, 'b'), checkpoint(2, [msg('user', 'a')], A), append(3, 'c')];
    expect(await epochOf(log)).toEqual({ fold: A, recovery: A, codes: [] });
  });

  it('is none for a log written before epochs, and for an epoch that is not a string of 1 to 128 characters', async () => {
    expect(await epochOf([append(0, 'a'), checkpoint(1, []), append(2, 'b')])).toMatchObject({
      fold: null,
      recovery: null,
    });
    for (const bad of [42, '', 'x'.repeat(129), null, { id: A }])
      expect(await epochOf([withEpoch(append(0, 'a'), bad)])).toEqual({ fold: null, recovery: null, codes: [] });
    expect((await epochOf([withEpoch(append(0, 'a'), 'x'.repeat(128))])).fold).toBe('x'.repeat(128));
  });

  it('is cleared by a checkpoint without one, and a later epoch is adopted without a conflict', async () => {
    // A writer that predates epochs continued the log, then a newer one gave it an epoch at its next checkpoint.
    const log = [withEpoch(append(0, 'a'), A), checkpoint(1, [msg('user', 'a')]), checkpoint(2, [msg('user', 'a')], B)];
    expect(await epochOf(log)).toEqual({ fold: B, recovery: B, codes: [] });
    expect(await epochOf(log.slice(0, 2))).toEqual({ fold: null, recovery: null, codes: [] });
  });

  it('is kept by a split checkpoint that carries it on its last part, and cleared by a complete one without (TJ-EVENT-025)', async () => {
    // A split checkpoint folds as one checkpoint at its last part (TJ-REPLAY-019), where a writer puts the epoch.
    const part = (seq: number, index: number, content: string, epoch?: string) =>
      withEpoch(ev(seq, 'checkpoint.part', { part: index, parts: 2, messages: [msg('user', content)] }), epoch);
    const kept = [withEpoch(append(0, 'a'), A), part(1, 0, 'a'), part(2, 1, 'b', A), append(3, 'c')];
    expect(await epochOf(kept)).toEqual({ fold: A, recovery: A, codes: [] });
    // Recovery starts at the set's first part and knows no earlier epoch: the whole-file fold must not keep A either.
    const cleared = [withEpoch(append(0, 'a'), A), part(1, 0, 'a'), part(2, 1, 'b'), append(3, 'c')];
    expect(await epochOf(cleared)).toEqual({ fold: null, recovery: null, codes: [] });
    // An incomplete set is no checkpoint: it clears nothing.
    const incomplete = [withEpoch(append(0, 'a'), A), part(1, 0, 'a'), append(2, 'c')];
    expect(await epochOf(incomplete)).toMatchObject({ fold: A, recovery: A });
  });

  it('reports a second epoch as epoch_conflict (error) and takes it, as recovery from the tail does (TJ-EVENT-026)', async () => {
    const log = [withEpoch(append(0, 'a'), A), checkpoint(1, [msg('user', 'a')], B), append(2, 'b')];
    const path = tempFile(log.map(line).join(''));
    const folded = await foldFile(path);
    expect(folded.epoch).toBe(B);
    expect(folded.findings).toEqual([
      expect.objectContaining({ code: 'epoch_conflict', severity: 'error', line: 2, file: path }),
    ]);
    expect((await recoverEventLog(path)).epoch).toBe(B);
  });

  it('ignores the epoch of a record its seq excludes', async () => {
    const log = [withEpoch(append(0, 'a'), A), withEpoch(append(0, 'again'), B)];
    expect(await epochOf(log)).toEqual({ fold: A, recovery: A, codes: ['seq_duplicate'] });
  });
});

describe('replay with an epoch (TJ-REPLAY-018)', () => {
  const log = [withEpoch(append(0, 'a'), A), append(1, 'b'), append(2, 'c'), append(3, 'd')];
  const answer = async (options: { after: number; epoch?: string | null }) => {
    const replay = await replayEventLog(tempFile(log.map(line).join('')), options);
    return replay.kind === 'records' ? replay.records.map((r) => r.value.seq) : replay.reason;
  };

  it("answers reset to a cursor of another epoch, even one the log's seqs would serve", async () => {
    expect(await answer({ after: 1, epoch: B })).toBe('reset');
    expect(await answer({ after: 1, epoch: null })).toBe('reset');
    expect(await answer({ after: 9, epoch: B })).toBe('reset');
  });

  it("serves a cursor of the log's epoch, a client holding nothing, and a client that sends no epoch by the cursor", async () => {
    expect(await answer({ after: 1, epoch: A })).toEqual([2, 3]);
    expect(await answer({ after: -1, epoch: B })).toEqual([0, 1, 2, 3]);
    expect(await answer({ after: 1 })).toEqual([2, 3]);
    expect(await answer({ after: 9, epoch: A })).toBe('ahead');
  });

  it('gives the snapshot its epoch, and refuses an epoch that is neither a string nor null', async () => {
    const replay = await replayEventLog(tempFile(log.map(line).join('')), { after: 1, epoch: B });
    expect(replay.kind === 'snapshot' && replay.snapshot.epoch).toBe(A);
    await expect(
      replayEventLog(tempFile(log.map(line).join('')), { after: 1, epoch: 7 as unknown as string }),
    ).rejects.toMatchObject({ code: 'invalid_option' });
  });
});
