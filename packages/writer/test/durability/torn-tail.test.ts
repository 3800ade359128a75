import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkStore } from '@turnjournal/reader';
import { describe, expect, it } from 'vitest';
import { faultyFileSystem, isSpaceWrite, recordingFileSystem } from '../support/faulty-fs.js';
import { AppendFile, encodeRecord, nodeFileSystem, openTurnJournal } from '../support/internals.js';
import { eventRecord, readAll } from '../support/journal.js';
import { tempDir } from '../support/temp.js';

const NAME = 'events.jsonl';

function line(n: number, text?: string): Buffer {
  return Buffer.from(encodeRecord(eventRecord(n, text)));
}

/** A new directory holding `events.jsonl` with `bytes`; returns the file path. */
function fileWith(bytes: Uint8Array): string {
  const file = join(tempDir('tj-torn-'), NAME);
  writeFileSync(file, bytes);
  return file;
}

/** Every file of the directory with its bytes (hex), sorted by name: the end state to compare. */
function snapshot(dir: string): Record<string, string> {
  const state: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) state[name] = readFileSync(join(dir, name)).toString('hex');
  return state;
}

/**
 * Opens `file`, checks that the torn tail after `committed` bytes was moved to its quarantine file exactly and cut
 * off (TJ-DUR-005), appends one record and closes: the file then reads clean.
 */
async function expectRepaired(file: string, committed: number, torn: Uint8Array): Promise<void> {
  const before = await readAll(file);
  expect(
    before.findings.map((f) => [f.code, f.offset, f.length]),
    'the reader sees the torn tail',
  ).toEqual([['torn_tail', committed, torn.length]]);
  const writer = await AppendFile.open(file, { durability: 'every' });
  const quarantine = `${file}.${committed}.torn`;
  expect(writer.opened.tornTail).toEqual({ length: torn.length, quarantine });
  expect(writer.size).toBe(committed);
  expect(statSync(file).size, 'truncated to the last LF').toBe(committed);
  expect(Buffer.from(readFileSync(quarantine)).equals(Buffer.from(torn)), 'the quarantine holds the torn bytes').toBe(
    true,
  );
  const ack = await writer.appendRecord(eventRecord(99));
  expect(ack.cursor, 'the new record starts on a line boundary (TJ-DUR-004)').toBe(committed);
  await writer.close();
  const after = await readAll(file);
  expect(after.findings).toEqual([]);
  expect(after.records.at(-1)?.value.seq).toBe(100);
  expect(after.records).toHaveLength(before.records.length + 1);
}

describe('torn-tail repair cases (spec §3.1, §11.1)', () => {
  it('a file without any LF is all torn tail: it is moved aside whole and the file starts empty (TJ-DUR-005)', async () => {
    const torn = Buffer.from('{"seq":1,"ts":"2026-01-01T00:00:00.000Z","type":"mess');
    await expectRepaired(fileWith(torn), 0, torn);
  });

  it('a complete JSON object without its LF is a torn tail, not a record (TJ-FRAME-003, TJ-DUR-005)', async () => {
    const committed = Buffer.concat([line(0), line(1)]);
    const torn = line(2).subarray(0, -1);
    const file = fileWith(Buffer.concat([committed, torn]));
    expect((await readAll(file)).records.map((r) => r.value.seq)).toEqual([1, 2]);
    await expectRepaired(file, committed.length, torn);
    expect((await readAll(file)).records.map((r) => r.value.seq)).toEqual([1, 2, 100]);
  });

  it('a torn tail followed by NUL bytes: the torn bytes are moved aside without the space after them (TJ-FRAME-030, TJ-DUR-005)', async () => {
    const committed = Buffer.concat([line(0), line(1)]);
    const torn = line(2).subarray(0, 20);
    await expectRepaired(fileWith(Buffer.concat([committed, torn, Buffer.alloc(5000)])), committed.length, torn);
  });

  it('NUL bytes before other bytes after the last LF are part of the torn tail (TJ-FRAME-030, TJ-DUR-005)', async () => {
    const committed = line(0);
    const torn = Buffer.concat([Buffer.alloc(100), Buffer.from('{"seq":2')]);
    await expectRepaired(fileWith(Buffer.concat([committed, torn, Buffer.alloc(300)])), committed.length, torn);
  });
});

describe('pre-allocated space (spec §3.8, §11.6)', () => {
  for (const [name, lines] of [
    ['after the last line', Buffer.concat([line(0), line(1)])],
    ['in a file without a line', Buffer.alloc(0)],
  ] as const) {
    it(`space ${name} is no torn tail: the writer keeps it, appends at its start and truncates it on close (TJ-FRAME-036, TJ-DUR-033, TJ-DUR-034)`, async () => {
      const file = fileWith(Buffer.concat([lines, Buffer.alloc(6000)]));
      const writer = await AppendFile.open(file, { durability: 'every' });
      expect(writer.opened.tornTail).toBeNull();
      expect(writer.size, 'the lines end where the space starts').toBe(lines.length);
      expect(readdirSync(join(file, '..')).filter((n) => n.endsWith('.torn'))).toEqual([]);
      const ack = await writer.appendRecord(eventRecord(99));
      expect(ack.cursor, 'the record starts where the lines end, not after the space (TJ-DUR-033)').toBe(lines.length);
      const open = readFileSync(file);
      expect(open.length, 'the space was overwritten, not extended').toBe(lines.length + 6000);
      await writer.close();
      const closed = readFileSync(file);
      expect(closed.length, 'the close truncated the space away (TJ-DUR-034)').toBe(ack.cursor + ack.length);
      expect(closed.equals(open.subarray(0, closed.length))).toBe(true);
    });
  }

  it('a writer pre-allocates in every and group modes: the space is NUL bytes after the last line, at most 64 KiB, and a failed write takes it away (TJ-DUR-035, TJ-DUR-023)', async () => {
    for (const durability of ['every', 'group'] as const) {
      const file = fileWith(Buffer.alloc(0));
      const writer = await AppendFile.open(file, { durability });
      let end = 0;
      for (let n = 0; n < 400; n++) {
        const ack = await writer.appendRecord(eventRecord(n, 'x'.repeat(n)));
        end = ack.cursor + ack.length;
        const bytes = readFileSync(file);
        expect(bytes.length, `${durability}: the file holds its lines and some space`).toBeGreaterThan(end);
        expect(bytes.length - end).toBeLessThanOrEqual(64 * 1024);
        expect(bytes.subarray(end).every((byte) => byte === 0)).toBe(true);
      }
      expect(writer.size).toBe(end);
      await writer.close();
      expect(statSync(file).size).toBe(end);
    }
  });

  it('in none mode the writer pre-allocates nothing before its first flush, but appends at the start of space it finds (TJ-DUR-033)', async () => {
    const lines = line(0);
    const file = fileWith(Buffer.concat([lines, Buffer.alloc(100)]));
    const writer = await AppendFile.open(file, { durability: 'none' });
    const first = await writer.appendRecord(eventRecord(1));
    expect(first.cursor).toBe(lines.length);
    await writer.appendRecord(eventRecord(2, 'y'.repeat(500)));
    await writer.flush();
    expect(statSync(file).size, 'past the space found, no new space').toBe(writer.size);
    await writer.close();
    expect((await readAll(file)).records.map((r) => r.value.seq)).toEqual([1, 2, 3]);
  });

  it('in none mode the writer pre-allocates from its first flush on: each later flushed append overwrites space, synced by one fdatasync (spec §11.6, TJ-DUR-035)', async () => {
    const file = fileWith(Buffer.alloc(0));
    const fs = recordingFileSystem(nodeFileSystem);
    const writer = await AppendFile.open(file, { durability: 'none', fs });
    const fsyncsAtOpen = fs.count('fsync', file);
    for (let n = 0; n < 5; n++) await writer.appendRecord(eventRecord(n));
    expect(statSync(file).size, 'no space before a flush: a file synced only on close gains nothing from it').toBe(
      writer.size,
    );
    await writer.flush();
    // A caller that syncs at its own boundaries, as a live session does: append, flush, append, flush…
    const sizes = new Set<number>();
    for (let n = 5; n < 45; n++) {
      await writer.appendRecord(eventRecord(n, 'm'.repeat(300)));
      await writer.flush();
      const bytes = readFileSync(file);
      expect(bytes.length).toBeGreaterThan(writer.size);
      expect(bytes.length - writer.size).toBeLessThanOrEqual(64 * 1024);
      expect(bytes.subarray(writer.size).every((byte) => byte === 0)).toBe(true);
      sizes.add(bytes.length);
    }
    // 40 flushed appends of about 400 bytes: the file grew a few times (space for about as much as it holds), not 40.
    expect(sizes.size).toBeLessThanOrEqual(4);
    // A journal this small extends its space with its appends' own writes, never ahead of them (see space-ahead.test.ts).
    expect(fs.calls.filter((c) => c.path === file && isSpaceWrite(c))).toEqual([]);
    expect(fs.count('fdatasync', file), 'one fdatasync per flush').toBe(41);
    expect(fs.count('fsync', file), 'no fsync before close').toBe(fsyncsAtOpen);
    await writer.close();
    expect(statSync(file).size, 'the close truncated the space away (TJ-DUR-034)').toBe(writer.size);
    expect((await readAll(file)).records).toHaveLength(45);
  });

  it('in none mode held lines written at their bound add no space: nothing syncs them, and space would double the write', async () => {
    const file = fileWith(Buffer.alloc(0));
    const fs = recordingFileSystem(nodeFileSystem);
    const writer = await AppendFile.open(file, { durability: 'none', fs });
    await writer.appendRecord(eventRecord(0));
    await writer.flush();
    const before = fs.calls.length;
    const line = encodeRecord(eventRecord(1, 'd'.repeat(120)));
    // Past the 64 KiB bound of held lines: at least one write of held lines only, made without a flush waiting.
    for (let n = 0; n < Math.ceil((80 * 1024) / line.length); n++) await writer.appendLine(line, { hold: true });
    const writes = fs.calls.slice(before).filter((c) => c.op === 'write' && c.path === file && c.ok === true);
    expect(writes.length).toBeGreaterThan(0);
    for (const write of writes)
      expect((write.bytes as Uint8Array).at(-1), 'a write of lines only, no NUL space').toBe(0x0a);
    // The next record someone waits for, flushed, adds the space (a live session's boundary record).
    await writer.appendRecord(eventRecord(2));
    await writer.flush();
    expect(statSync(file).size).toBeGreaterThan(writer.size);
    await writer.close();
  });

  it('in none mode `preallocate: false` keeps a flushed file without space', async () => {
    const file = fileWith(Buffer.alloc(0));
    const writer = await AppendFile.open(file, { durability: 'none', preallocate: false });
    for (let n = 0; n < 10; n++) {
      await writer.appendRecord(eventRecord(n));
      await writer.flush();
      expect(statSync(file).size).toBe(writer.size);
    }
    await writer.close();
  });

  it('a torn tail longer than the backward scan window is found and moved aside whole (TJ-DUR-005)', async () => {
    const committed = Buffer.concat([line(0, 'a'.repeat(100_000)), line(1)]);
    const torn = Buffer.from(`{"seq":3,"ts":"x","payload":"${'b'.repeat(200_000)}`);
    await expectRepaired(fileWith(Buffer.concat([committed, torn])), committed.length, torn);
  });

  it('a file that ends with an LF, or is empty, needs no repair and nothing is moved aside', async () => {
    for (const bytes of [Buffer.alloc(0), Buffer.concat([line(0), line(1)])]) {
      const file = fileWith(bytes);
      const writer = await AppendFile.open(file, { durability: 'every' });
      expect(writer.opened.tornTail).toBeNull();
      expect(writer.size).toBe(bytes.length);
      await writer.close();
      expect(readdirSync(join(file, '..'))).toEqual([NAME]);
    }
  });
});

describe('a file that changes under the repair', () => {
  it('a file that shrinks while its torn tail is copied fails the open with write_failed, never a bare error, and leaves no lock', async () => {
    const committed = line(0);
    const file = fileWith(Buffer.concat([committed, Buffer.from('{"seq":2,"ts"')]));
    // The backward scan (read 1) sees the tail; the copy's read (read 2) finds the end of the file early.
    const fs = faultyFileSystem(nodeFileSystem, [{ op: 'read', path: /events\.jsonl$/, nth: 2, short: () => 0 }]);
    const failure = await AppendFile.open(file, { durability: 'every', fs }).catch((error: unknown) => error);
    expect(fs.fired).toHaveLength(1);
    expect(failure).toMatchObject({ code: 'write_failed', file, operation: 'read' });
    expect(existsSync(`${file}.lock`)).toBe(false);
  });
});

describe('a repair that crashed half-way ends the same when the journal is reopened (TJ-DUR-005, TJ-DUR-010)', () => {
  const committed = Buffer.concat([line(0), line(1)]);
  const torn = Buffer.from('{"seq":3,"ts":"2026-01-01T00:00:00.000Z","ty');
  const initial = Buffer.concat([committed, torn]);
  const quarantineName = `${NAME}.${committed.length}.torn`;

  async function cleanEndState(): Promise<Record<string, string>> {
    const file = fileWith(initial);
    await (await AppendFile.open(file, { durability: 'every' })).close();
    return snapshot(join(file, '..'));
  }

  async function reopenEndState(file: string): Promise<Record<string, string>> {
    await (await AppendFile.open(file, { durability: 'every' })).close();
    return snapshot(join(file, '..'));
  }

  it('the end state of a clean repair: the committed lines, and the torn bytes in their quarantine file', async () => {
    expect(await cleanEndState()).toEqual({
      [NAME]: committed.toString('hex'),
      [quarantineName]: torn.toString('hex'),
    });
  });

  it('crash after the quarantine copy was renamed into place, before the truncation', async () => {
    const file = fileWith(initial);
    writeFileSync(`${file}.${committed.length}.torn`, torn);
    const writer = await AppendFile.open(file, { durability: 'every' });
    expect(writer.opened.tornTail?.length).toBe(torn.length);
    await writer.close();
    expect(snapshot(join(file, '..'))).toEqual(await cleanEndState());
  });

  it('crash while the quarantine copy was being written: its temporary file is removed (TJ-DUR-010)', async () => {
    const file = fileWith(initial);
    const temporary = join(file, '..', `.${quarantineName}.0123456789ab.tmp`);
    writeFileSync(temporary, torn.subarray(0, 10));
    expect(await reopenEndState(file)).toEqual(await cleanEndState());
    expect(existsSync(temporary)).toBe(false);
  });

  it('crash after the truncation, before its fsync: nothing is left to repair and the quarantine stays', async () => {
    const file = fileWith(committed);
    writeFileSync(`${file}.${committed.length}.torn`, torn);
    expect(await reopenEndState(file)).toEqual(await cleanEndState());
  });

  it('a quarantine file left by an earlier repair at the same offset is replaced by the torn bytes now found', async () => {
    const file = fileWith(initial);
    writeFileSync(`${file}.${committed.length}.torn`, 'older torn bytes');
    expect(await reopenEndState(file)).toEqual(await cleanEndState());
  });

  it('a failure at every file-system call of the open, then a reopen, ends in the clean end state', async () => {
    const clean = await cleanEndState();
    // How many calls a clean open makes (lock, scan, copy, sync, rename, truncate, fsync). Calls of close are left
    // out: a lock whose release fails is left behind on purpose (it names this live process, so only a restart
    // frees it).
    const recording = recordingFileSystem(nodeFileSystem);
    const probe = await AppendFile.open(fileWith(initial), { durability: 'every', fs: recording });
    const calls = recording.calls.length;
    await probe.close();
    expect(calls).toBeGreaterThan(10);
    for (let k = 1; k <= calls; k++) {
      const file = fileWith(initial);
      const fs = faultyFileSystem(nodeFileSystem, [{ op: '*', nth: k, errno: 'EIO' }]);
      const open = await AppendFile.open(file, { durability: 'every', fs }).then(
        (writer) => writer,
        (error: unknown) => error as Error,
      );
      if (open instanceof AppendFile) await open.close().catch(() => undefined);
      else expect(open, `call ${k}`).toMatchObject({ code: 'write_failed' });
      expect(existsSync(`${file}.lock`), `call ${k} (${fs.fired[0]?.fault.op}): no lock left`).toBe(false);
      expect(await reopenEndState(file), `failure at call ${k}: ${JSON.stringify(fs.fired)}`).toEqual(clean);
    }
  });
});

describe('mid-file damage is left in place and reported (spec §3.3, §11.1)', () => {
  it('a turn journal with a damaged line, a glued record and a zero-filled region in the middle and a torn tail: only the tail is repaired, the rest reported in journal.findings', async () => {
    const dir = join(tempDir('tj-torn-'), '_turn_journal');
    mkdirSync(dir);
    const file = join(dir, 's1.jsonl');
    const submitted = (turn: string) =>
      `${JSON.stringify({ version: 1, event: 'submitted', turn_id: turn, session_id: 's1', created_at: 1.5, role: 'user', content: turn })}\n`;
    const garbage = 'not json at all\n';
    const glued = `{"version":1,"event":"subm${submitted('t3')}`;
    const zeros = `${'\u0000'.repeat(16)}\n`;
    const body = `${submitted('t1')}${garbage}${submitted('t2')}${glued}${zeros}${submitted('t4')}`;
    const torn = '{"version":1,"event":"worker_started","turn_id":"t1","se';
    writeFileSync(file, body + torn);
    const bodyBytes = Buffer.byteLength(body);

    const journal = await openTurnJournal({ dir, sessionId: 's1' });
    expect(journal.opened.tornTail).toEqual({
      length: torn.length,
      quarantine: `${file}.${bodyBytes}.torn`,
    });
    const damageAt = Buffer.byteLength(submitted('t1'));
    expect(journal.findings.map((f) => [f.code, f.line])).toEqual([
      ['malformed_line', 2],
      ['glued_record', 4],
      ['zero_filled_region', 5],
    ]);
    expect(journal.findings[0]?.offset).toBe(damageAt);
    // The writer knows every turn around the damage, including the one salvaged from the glued line.
    for (const turn of ['t1', 't2', 't3', 't4']) expect(journal.stateOf(turn), turn).toBe('submitted');
    await journal.workerStarted('t2');
    await journal.close();

    const bytes = readFileSync(file, 'utf8');
    expect(bytes.startsWith(body), 'the damage is left in place, byte for byte').toBe(true);
    expect(readFileSync(`${file}.${bodyBytes}.torn`, 'utf8')).toBe(torn);
    const check = await checkStore([dir]);
    expect(check.findings.map((f) => f.code).sort()).toEqual(['glued_record', 'malformed_line', 'zero_filled_region']);
    expect(check.sessions[0]?.turns.map((t) => [t.turnId, t.state])).toEqual([
      ['t1', 'submitted'],
      ['t2', 'worker_started'],
      ['t3', 'submitted'],
      ['t4', 'submitted'],
    ]);
  });
});
