import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  isSpaceWrite,
  type RecordedCall,
  type RecordingFileSystem,
  recordingFileSystem,
} from '../support/faulty-fs.js';
import {
  type AppendAck,
  AppendFile,
  type Durability,
  encodeRecord,
  nodeFileSystem,
  openTurnJournal,
} from '../support/internals.js';
import { eventRecord, readAll } from '../support/journal.js';
import { tempDir } from '../support/temp.js';

function journalPath(): string {
  return join(tempDir('tj-modes-'), 'events.jsonl');
}

interface Resolved {
  readonly n: number;
  readonly ack: AppendAck;
  /** Tick of the recording file system when the promise's reaction ran. */
  readonly tick: number;
  /** Successful fdatasync calls of the file at that moment. */
  readonly syncs: number;
}

/** Appends records `from..from+count-1` concurrently and notes, for each, when it resolved. */
async function appendConcurrently(
  writer: AppendFile,
  fs: RecordingFileSystem,
  from: number,
  count: number,
): Promise<Resolved[]> {
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      writer.appendRecord(eventRecord(from + i, `r${from + i}:${'z'.repeat((i * 37) % 300)}`)).then((ack) => ({
        n: from + i,
        ack,
        tick: fs.now(),
        syncs: fs.count('fdatasync', writer.path),
      })),
    ),
  );
}

/** The successful write call of `file` that wrote the byte at `position`. */
function writeOf(fs: RecordingFileSystem, file: string, position: number): RecordedCall {
  const call = fs.calls.find(
    (c) =>
      c.op === 'write' &&
      c.ok === true &&
      c.path === file &&
      (c.position as number) <= position &&
      position < (c.position as number) + (c.written as number),
  );
  if (call === undefined) throw new Error(`no write of ${file} covers byte ${position}`);
  return call;
}

/**
 * Checks TJ-DUR-003 / TJ-DUR-014 for each resolved append: an fdatasync of the file started after the write of the
 * record's last byte had returned, and returned before the append resolved. Returns, per append, the number of syncs
 * that had completed when its bytes were written and when it resolved.
 */
function expectCoveredBySync(fs: RecordingFileSystem, file: string, resolved: readonly Resolved[]) {
  return resolved.map(({ n, ack, tick, syncs }) => {
    const write = writeOf(fs, file, ack.cursor + ack.length - 1);
    const covering = fs.calls.find(
      (c) =>
        c.op === 'fdatasync' &&
        c.path === file &&
        c.ok === true &&
        c.start > (write.end as number) &&
        (c.end as number) <= tick,
    );
    expect(covering, `append ${n} resolved without a sync that started after its write`).toBeDefined();
    const syncsAtWrite = fs.calls.filter(
      (c) => c.op === 'fdatasync' && c.path === file && c.ok === true && (c.end as number) < (write.end as number),
    ).length;
    expect(syncs, `append ${n}: more syncs had completed at resolve time than when it was written`).toBeGreaterThan(
      syncsAtWrite,
    );
    return { syncsAtWrite, syncsAtResolve: syncs };
  });
}

function indexOf(fs: RecordingFileSystem, match: (call: RecordedCall) => boolean, from = 0): number {
  const index = fs.calls.findIndex((call, i) => i >= from && match(call));
  expect(index, 'an expected file-system call is missing').toBeGreaterThanOrEqual(0);
  return index;
}

describe('durability modes, counted through a recording file system (spec §11.3)', () => {
  it('`every` does one fdatasync per record and acknowledges each after its own sync (TJ-DUR-003, TJ-DUR-011)', async () => {
    const file = journalPath();
    const fs = recordingFileSystem(nodeFileSystem);
    const writer = await AppendFile.open(file, { durability: 'every', fs });
    expect(writer.durability).toBe('every');
    const fsyncsAtOpen = fs.count('fsync', file);
    const sequential: Resolved[] = [];
    for (let n = 0; n < 10; n++) sequential.push(...(await appendConcurrently(writer, fs, n, 1)));
    const concurrent = await appendConcurrently(writer, fs, 10, 10);
    expect(fs.count('fdatasync', file)).toBe(20);
    expect(fs.count('write', file)).toBe(20);
    expectCoveredBySync(fs, file, [...sequential, ...concurrent]);
    // In `every` mode even concurrent appends are synced one by one: append i resolves after sync i.
    expect(concurrent.map((r) => r.syncs)).toEqual(Array.from({ length: 10 }, (_, i) => 11 + i));
    await writer.close();
    expect(fs.count('fsync', file), 'nothing left to fsync on close').toBe(fsyncsAtOpen);
  });

  it('`group` with 64 concurrent appends shares syncs, and every promise resolves only after a sync that covers it (TJ-DUR-014)', async () => {
    const file = journalPath();
    const fs = recordingFileSystem(nodeFileSystem);
    const writer = await AppendFile.open(file, { durability: 'group', fs });
    expect(writer.durability).toBe('group');
    const resolved = await appendConcurrently(writer, fs, 0, 64);
    const syncs = fs.count('fdatasync', file);
    expect(syncs).toBeGreaterThanOrEqual(1);
    expect(syncs, 'far fewer syncs than records').toBeLessThanOrEqual(4);
    expect(fs.count('write', file), 'each batch is one write').toBe(syncs);
    const counts = expectCoveredBySync(fs, file, resolved);
    expect(counts.every((c) => c.syncsAtResolve > c.syncsAtWrite)).toBe(true);
    // A second wave while nothing is in flight: again shared.
    const before = fs.count('fdatasync', file);
    await appendConcurrently(writer, fs, 64, 64);
    expect(fs.count('fdatasync', file) - before).toBeLessThanOrEqual(4);
    await writer.close();
    expect((await readAll(file)).records.map((r) => r.value.seq)).toEqual(Array.from({ length: 128 }, (_, i) => i + 1));
  });

  it('`none` syncs nothing until flush (an fdatasync) and close (an fsync, TJ-DUR-015)', async () => {
    const file = journalPath();
    const fs = recordingFileSystem(nodeFileSystem);
    const writer = await AppendFile.open(file, { durability: 'none', fs });
    expect(writer.durability).toBe('none');
    const syncsAfterOpen = fs.count('fsync', file);
    await appendConcurrently(writer, fs, 0, 20);
    for (let n = 20; n < 30; n++) await writer.appendRecord(eventRecord(n));
    expect(fs.count('fdatasync', file)).toBe(0);
    expect(fs.count('fsync', file)).toBe(syncsAfterOpen);
    await writer.flush();
    // A flush makes the lines durable (spec §11.1): the data and the size, not the modification time.
    expect(fs.count('fdatasync', file)).toBe(1);
    expect(fs.count('fsync', file)).toBe(syncsAfterOpen);
    await writer.appendRecord(eventRecord(30));
    const lastWrite = fs.calls.findLastIndex((c) => c.op === 'write' && c.path === file);
    await writer.close();
    expect(fs.count('fsync', file)).toBe(syncsAfterOpen + 1);
    const closeSync = fs.calls.findLastIndex((c) => c.op === 'fsync' && c.path === file);
    const closeCall = fs.calls.findLastIndex((c) => c.op === 'close' && c.path === file);
    expect(lastWrite).toBeLessThan(closeSync);
    expect(closeSync, 'the fsync comes before the descriptor is closed').toBeLessThan(closeCall);
    expect(fs.count('fdatasync', file)).toBe(1);
    expect((await readAll(file)).records).toHaveLength(31);
  });

  it('creating a file takes the lock durably, then fsyncs the file, then its directory, before the first record (TJ-DUR-007, TJ-DUR-017)', async () => {
    const file = journalPath();
    const dir = dirname(file);
    const lock = `${file}.lock`;
    const fs = recordingFileSystem(nodeFileSystem);
    const writer = await AppendFile.open(file, { durability: 'every', fs });
    expect(writer.opened.created).toBe(true);
    await writer.appendRecord(eventRecord(0));
    const ackTick = fs.now();

    // The lock is written to a temporary file, synced, then linked as `<file>.lock` (TJ-DUR-029).
    const isLockTemporary = (path: string | undefined) => path !== undefined && /\.lock\.[0-9a-f]+\.tmp$/.test(path);
    const lockCreate = indexOf(
      fs,
      (c) => c.op === 'open' && isLockTemporary(c.path) && c.detail === 'create-exclusive',
    );
    const lockWrite = indexOf(fs, (c) => c.op === 'write' && isLockTemporary(c.path), lockCreate);
    const lockSync = indexOf(fs, (c) => c.op === 'fsync' && isLockTemporary(c.path), lockWrite);
    const lockLink = indexOf(fs, (c) => c.op === 'link' && c.detail === lock, lockSync);
    const lockDirSync = indexOf(fs, (c) => c.op === 'fsyncDirectory' && c.path === dir, lockLink);
    const create = indexOf(fs, (c) => c.op === 'open' && c.path === file && c.detail === 'create-exclusive');
    const fileSync = indexOf(fs, (c) => c.op === 'fsync' && c.path === file, create);
    const dirSync = indexOf(fs, (c) => c.op === 'fsyncDirectory' && c.path === dir, fileSync);
    const firstWrite = indexOf(fs, (c) => c.op === 'write' && c.path === file);
    const firstSync = indexOf(fs, (c) => c.op === 'fdatasync' && c.path === file, firstWrite);
    expect(lockDirSync, 'the lock is durable before the journal is created').toBeLessThan(create);
    expect([create, fileSync, dirSync, firstWrite, firstSync]).toEqual(
      [create, fileSync, dirSync, firstWrite, firstSync].sort((a, b) => a - b),
    );
    const calls = fs.calls;
    expect(calls[dirSync]?.end as number, 'the directory sync returned before the first write').toBeLessThan(
      calls[firstWrite]?.start as number,
    );
    expect(calls[firstSync]?.end as number).toBeLessThanOrEqual(ackTick);
    await writer.close();
  });

  it('creating missing directories fsyncs the parent of each one (TJ-DUR-008)', async () => {
    const root = tempDir('tj-modes-');
    const dir = join(root, 'a', 'b', '_turn_journal');
    const fs = recordingFileSystem(nodeFileSystem);
    const journal = await openTurnJournal({ dir, sessionId: 's1', fs });
    for (const created of [join(root, 'a'), join(root, 'a', 'b'), dir]) {
      const mkdir = indexOf(fs, (c) => c.op === 'mkdir' && c.path === created);
      indexOf(fs, (c) => c.op === 'fsyncDirectory' && c.path === dirname(created), mkdir);
    }
    await journal.close();
  });

  it('repairing a torn tail copies it aside and syncs the copy, then truncates, then fsyncs, before any append (TJ-DUR-005)', async () => {
    const file = journalPath();
    const dir = dirname(file);
    const committed = encodeRecord(eventRecord(0));
    writeFileSync(file, Buffer.concat([committed, Buffer.from('{"seq":2,"ts":"20')]));
    const fs = recordingFileSystem(nodeFileSystem);
    const writer = await AppendFile.open(file, { durability: 'every', fs });
    const quarantine = `${file}.${committed.length}.torn`;
    expect(writer.opened.tornTail?.quarantine).toBe(quarantine);
    await writer.appendRecord(eventRecord(1));

    const isTemp = (c: RecordedCall) => c.path.startsWith(join(dir, `.events.jsonl.${committed.length}.torn.`));
    const copy = indexOf(fs, (c) => c.op === 'write' && isTemp(c));
    const copySync = indexOf(fs, (c) => c.op === 'fsync' && isTemp(c), copy);
    const rename = indexOf(fs, (c) => c.op === 'rename' && c.detail === quarantine, copySync);
    const dirSync = indexOf(fs, (c) => c.op === 'fsyncDirectory' && c.path === dir, rename);
    const truncate = indexOf(fs, (c) => c.op === 'ftruncate' && c.path === file, dirSync);
    const fileSync = indexOf(fs, (c) => c.op === 'fsync' && c.path === file, truncate);
    const firstWrite = indexOf(fs, (c) => c.op === 'write' && c.path === file);
    expect(fs.calls[truncate]?.detail, 'truncated to the last LF').toBe(committed.length);
    expect(fileSync).toBeLessThan(firstWrite);
    expect(fs.calls.filter((c) => c.op === 'ftruncate')).toHaveLength(1);
    await writer.close();
    expect(readFileSync(quarantine).toString()).toBe('{"seq":2,"ts":"20');
  });

  for (const durability of ['every', 'group', 'none'] as Durability[]) {
    it(`records are written in call order, at contiguous offsets, in ${durability} mode (TJ-DUR-006)`, async () => {
      const file = journalPath();
      const fs = recordingFileSystem(nodeFileSystem);
      const writer = await AppendFile.open(file, { durability, fs });
      const resolved = await appendConcurrently(writer, fs, 0, 200);
      await writer.close();
      let offset = 0;
      for (const { n, ack } of resolved) {
        expect(ack.cursor, `append ${n}`).toBe(offset);
        offset += ack.length;
      }
      expect(statSync(file).size).toBe(offset);
      // The lines' writes; the space a writer adds ahead of them, past their end, is written beside them.
      const positions = fs.calls
        .filter((c) => c.op === 'write' && c.path === file && !isSpaceWrite(c))
        .map((c) => c.position as number);
      expect(positions).toEqual([...positions].sort((a, b) => a - b));
      expect((await readAll(file)).records.map((r) => r.value.seq)).toEqual(resolved.map((r) => r.n + 1));
    });
  }

  it('turn journal calls that overlap are written in call order (TJ-DUR-006)', async () => {
    const dir = tempDir();
    const journal = await openTurnJournal({ dir, sessionId: 's1', durability: 'group' });
    const submitted = await Promise.all(Array.from({ length: 20 }, (_, i) => journal.submit({ content: `c${i}` })));
    await Promise.all(submitted.map(({ turnId }) => journal.workerStarted(turnId)));
    await journal.close();
    const records = (await readAll(join(dir, 's1.jsonl'))).records.map((r) => r.value);
    expect(records.slice(0, 20).map((r) => r.content)).toEqual(Array.from({ length: 20 }, (_, i) => `c${i}`));
    expect(records.slice(20).map((r) => r.turn_id)).toEqual(submitted.map((s) => s.turnId));
  });
});

describe('what a line looks like on disk (spec §3.1)', () => {
  it('escapes U+2028 and U+2029, never writes a BOM or a CR, and ends each record with one LF (TJ-FRAME-005, TJ-FRAME-007, TJ-FRAME-008, TJ-FRAME-009)', async () => {
    const file = journalPath();
    const writer = await AppendFile.open(file, { durability: 'every' });
    const tricky = ['line\u2028sep', 'para\u2029sep', 'nel\u0085', 'cr\r\nlf', '\uFEFFbom-in-text', 'emoji 🎉'];
    for (const [i, text] of tricky.entries()) await writer.appendRecord(eventRecord(i, text));
    await writer.close();
    const bytes = readFileSync(file);
    expect([...bytes.subarray(0, 3)]).not.toEqual([0xef, 0xbb, 0xbf]);
    expect(bytes.includes(Buffer.from('\u2028')), 'no raw U+2028').toBe(false);
    expect(bytes.includes(Buffer.from('\u2029')), 'no raw U+2029').toBe(false);
    expect(bytes.includes(0x0d), 'no raw CR').toBe(false);
    const text = bytes.toString('utf8');
    expect(text).toContain('line\\u2028sep');
    expect(text).toContain('para\\u2029sep');
    expect(text.split('\n')).toHaveLength(tricky.length + 1);
    expect(text.endsWith('\n')).toBe(true);
    // The reader gives back exactly the strings that were written.
    const read = await readAll(file);
    expect(read.findings).toEqual([]);
    expect(read.records.map((r) => (r.value.payload as { message: { content: string } }).message.content)).toEqual(
      tricky,
    );
  });

  it('rejects a line over maxLineBytes with line_too_long and writes nothing; a line of exactly the limit is accepted', async () => {
    const file = journalPath();
    const fs = recordingFileSystem(nodeFileSystem);
    const limit = 120;
    const writer = await AppendFile.open(file, { durability: 'every', fs, maxLineBytes: limit });
    // Size the content in bytes (é is two bytes) so that the line is exactly the limit, then one byte over.
    const base = encodeRecord(eventRecord(0, '')).length - 1;
    const fill = limit - base;
    const exact = eventRecord(0, `${'é'.repeat(Math.floor(fill / 2))}${fill % 2 === 1 ? 'x' : ''}`);
    expect(encodeRecord(exact).length - 1).toBe(limit);
    const over = eventRecord(1, `${'é'.repeat(Math.floor(fill / 2))}${fill % 2 === 1 ? 'x' : ''}y`);
    const writesBefore = fs.calls.filter((c) => c.op === 'write' && c.path === file).length;
    await expect(writer.appendRecord(over)).rejects.toMatchObject({ code: 'line_too_long', file });
    expect(fs.calls.filter((c) => c.op === 'write' && c.path === file).length, 'nothing was written').toBe(
      writesBefore,
    );
    expect(statSync(file).size).toBe(0);
    await writer.appendRecord(exact);
    // An appended line must hold exactly one LF, at its end.
    await expect(writer.appendLine(Buffer.from('{"a":1}\n{"b":2}\n'))).rejects.toMatchObject({
      code: 'invalid_record',
    });
    await expect(writer.appendLine(Buffer.from('{"a":1}'))).rejects.toMatchObject({ code: 'invalid_record' });
    // An encoded line handed to the seam is held to the same limit (TJ-DUR-028): the exact one's bytes plus one.
    const overLine = Buffer.concat([encodeRecord(exact).subarray(0, limit), Buffer.from('z\n')]);
    await expect(writer.appendLine(overLine)).rejects.toMatchObject({ code: 'line_too_long', file });
    await writer.close();
    expect(statSync(file).size).toBe(limit + 1);

    const dir = tempDir();
    const journal = await openTurnJournal({ dir, sessionId: 's1', maxLineBytes: 300 });
    await expect(journal.submit({ content: 'x'.repeat(400), turnId: 'big' })).rejects.toMatchObject({
      code: 'line_too_long',
    });
    expect(journal.stateOf('big'), 'a refused submit leaves no turn behind').toBeUndefined();
    await journal.close();
    expect(statSync(join(dir, 's1.jsonl')).size).toBe(0);
  });
});
