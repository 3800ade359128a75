import { statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { IncrementalEventFold } from '../../src/event/incremental-event-fold.js';
import { recoverEventLog } from '../../src/event/recover-event-log.js';
import { readRunIndex } from '../../src/event/run-index.js';
import { tempFile } from '../support/temp.js';
import { ev, foldFile, line, msg } from './event-log.js';

const WHERE = { file: 'events.jsonl' };
const a = msg('user', 'a');
const b = msg('assistant', 'b');
const c = msg('user', 'c');
const d = msg('assistant', 'd');

/** The records of a checkpoint of `messages` split in `parts` parts from `seq` on, extra payload on the last part. */
function split(seq: number, messages: readonly object[], parts: number, last: Record<string, unknown> = {}) {
  const size = Math.ceil(messages.length / parts);
  return Array.from({ length: parts }, (_, part) =>
    ev(seq + part, 'checkpoint.part', {
      part,
      parts,
      messages: messages.slice(part * size, (part + 1) * size),
      ...(part === parts - 1 ? last : {}),
    }),
  );
}

function fold(records: readonly Record<string, unknown>[]): IncrementalEventFold {
  const folded = new IncrementalEventFold();
  for (const record of records)
    folded.add(record.type as string, record, record.seq as number, true, { ...WHERE, offset: record.seq as number });
  return folded;
}

const codes = (f: IncrementalEventFold) => f.finish().findings.map((finding) => finding.code);

describe('split checkpoints in the fold (TJ-REPLAY-019)', () => {
  it('a complete set replaces the list with its parts’ messages, at its last part', () => {
    const records = [ev(0, 'message_append', { message: a }), ...split(1, [b, c, d], 3)];
    const folded = fold(records.slice(0, 3));
    expect(folded.messages).toEqual([a]);
    const whole = fold(records);
    expect(whole.messages).toEqual([b, c, d]);
    expect(codes(whole)).toEqual([]);
  });

  it('a set interrupted by another record, out of order or ended by the file changes nothing and is reported', () => {
    const before = ev(0, 'message_append', { message: a });
    const [p0, p1, p2] = split(1, [b, c, d], 3);
    const interrupted = fold([before, p0, p1, ev(3, 'x.acme.note', { n: 1 }), { ...p2, seq: 4 }] as never);
    expect(interrupted.messages).toEqual([a]);
    expect(codes(interrupted)).toEqual(['incomplete_checkpoint', 'incomplete_checkpoint']);

    const reordered = fold([before, p0, { ...p2, seq: 2 }, { ...p1, seq: 3 }] as never);
    expect(reordered.messages).toEqual([a]);
    expect(codes(reordered)).toContain('incomplete_checkpoint');

    const ended = fold([before, p0, p1] as never);
    expect(ended.messages).toEqual([a]);
    expect(codes(ended)).toEqual(['incomplete_checkpoint']);
  });

  it('a set whose seqs skip one (a part not accepted) changes nothing', () => {
    const [p0, p1, p2] = split(1, [b, c, d], 3);
    const skipped = fold([ev(0, 'message_append', { message: a }), p0, p1, { ...p2, seq: 4 }] as never);
    expect(skipped.messages).toEqual([a]);
    expect(codes(skipped)).toContain('incomplete_checkpoint');
  });
});

describe('split checkpoints in recovery (TJ-REPLAY-020)', () => {
  /** A long prefix of appends, a single-line checkpoint, more appends, a split checkpoint of all of them, a tail. */
  function longLog(): { content: string; single: number; messages: object[]; splitAt: number; lastPart: number } {
    const messages: object[] = [];
    let content = '';
    let seq = 0;
    for (; seq < 2000; seq++) {
      const message = msg('user', `${seq} ${'x'.repeat(100)}`);
      messages.push(message);
      content += line(ev(seq, 'message_append', { message }));
    }
    const single = content.length;
    content += line(ev(seq++, 'checkpoint', { messages }));
    for (let i = 0; i < 10; i++, seq++) {
      const message = msg('assistant', `${seq}`);
      messages.push(message);
      content += line(ev(seq, 'message_append', { message }));
    }
    const splitAt = content.length;
    const parts = split(seq, messages, 4, { runs: [] });
    for (const part of parts.slice(0, -1)) content += line(part);
    const lastPart = content.length;
    content += line(parts.at(-1));
    seq += 4;
    content += line(ev(seq++, 'message_append', { message: c }));
    messages.push(c);
    return { content, single, messages, splitAt, lastPart };
  }

  it('folds from the first part of the last complete set, reading only the tail after it', async () => {
    const log = longLog();
    const path = tempFile(log.content, 'events.jsonl');
    // The last part's run index (no run) shows no run can be active: no need to look for a chat.started before it.
    const recovered = await recoverEventLog(path, { chunkBytes: 4096 });
    expect(recovered.messages).toEqual(log.messages);
    expect(recovered.messages).toEqual((await foldFile(path)).messages);
    expect(recovered).toMatchObject({ checkpointOffset: log.splitAt, startOffset: log.splitAt, firstSeq: 2011 });
    expect(recovered.acceptedSinceCheckpoint).toBe(1);
    // Backwards and forwards over the tail from the first part, in 4 KiB chunks: the single-line checkpoint and the
    // 2,000 records before it are never read.
    const tail = statSync(path).size - log.splitAt;
    expect(recovered.bytesRead).toBeLessThanOrEqual(2 * tail + 2 * 4096);
    expect(recovered.findings).toEqual([]);
  });

  it('reads the run index from the last part (TJ-EVENT-030, TJ-EVENT-020)', async () => {
    const log = longLog();
    const runs = [
      {
        request_id: 'old',
        started_seq: 3,
        started_ts: 't',
        outcome: 'done',
        finished_seq: 4,
        finished_ts: 't',
        acked: true,
        acked_by: [],
      },
    ];
    const content = log.content.replace('"runs":[]', `"runs":${JSON.stringify(runs)}`);
    const path = tempFile(content, 'events.jsonl');
    const size = statSync(path).size;
    const handle = await open(path);
    try {
      const source = {
        read: async (buffer: Uint8Array, offset: number, length: number, position: number) =>
          (await handle.read(buffer, offset, length, position)).bytesRead,
      };
      const index = await readRunIndex({ source, size, checkpointOffset: log.lastPart });
      expect([...index.runs.keys()]).toEqual(['old']);
      expect(index.scannedFrom).toBe(log.lastPart);
    } finally {
      await handle.close();
    }
  });

  it('falls back to the previous checkpoint when the last part is torn or missing (a crash between parts)', async () => {
    const log = longLog();
    const torn = log.content.slice(0, log.lastPart + 20);
    const missing = log.content.slice(0, log.lastPart);
    for (const content of [torn, missing]) {
      const path = tempFile(content, 'events.jsonl');
      const recovered = await recoverEventLog(path);
      expect(recovered.checkpointOffset).toBe(log.single);
      expect(recovered.messages).toEqual((await foldFile(path)).messages);
      expect(recovered.messages).toHaveLength(2010);
      expect(recovered.findings.map((f) => f.code)).toContain('incomplete_checkpoint');
    }
  });
});
