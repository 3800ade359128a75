import { spawnSync } from 'node:child_process';
import { readFileSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkStore } from '@turnjournal/reader';
import { describe, expect, it } from 'vitest';
import { faultyFileSystem } from '../support/faulty-fs.js';
import {
  AppendFile,
  type FileSystem,
  nodeFileSystem,
  openTurnJournal,
  withSynchronousWrite,
} from '../support/internals.js';
import { eventRecord, readAll } from '../support/journal.js';
import { tempDir } from '../support/temp.js';

/** An errno error as a full disk or a reached quota gives it. */
function outOfRoom(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: no room left`), { code });
}

/**
 * The real file system on a disk with room for `capacity` bytes of files ending in `suffix` (the journal, not its
 * lock): a write is cut at the capacity (a short write, as the kernel makes it) and a write that starts there fails
 * with `code`. With `now`, the layer has the synchronous write the real one has (`synchronousWrite`), as a second path.
 */
function nearlyFull(capacity: number, code: string, now: boolean): FileSystem {
  const paths = new Map<number, string>();
  const room = (fd: number, position: number, length: number): number => {
    if (!(paths.get(fd) ?? '').endsWith('.jsonl')) return length;
    if (position >= capacity) throw outOfRoom(code);
    return Math.min(length, capacity - position);
  };
  const fs: FileSystem = {
    ...nodeFileSystem,
    open: async (path, mode) => {
      const fd = await nodeFileSystem.open(path, mode);
      paths.set(fd, path);
      return fd;
    },
    write: async (fd, buffer, offset, length, position, options) =>
      nodeFileSystem.write(fd, buffer, offset, room(fd, position, length), position, options),
  };
  if (!now) return fs;
  return withSynchronousWrite(fs, (fd, buffer, offset, length, position) =>
    writeSync(fd, buffer, offset, room(fd, position, length), position),
  );
}

async function settle(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => 'ok',
    (error: { code?: string; errno?: string }) => error.errno ?? error.code ?? 'bare error',
  );
}

/**
 * Spec §11.6: pre-allocated space is an optimisation. A disk (or quota) with room for a record but not for the space
 * the writer adds after it must not make the writer refuse the record: before, every append of a journal whose
 * space had run out failed with ENOSPC while the disk still had room for it (a turn journal with 3,000 bytes left
 * could not take one 200-byte submission, and a large journal, whose space grows by 64 KiB, stopped 64 KiB early).
 */
describe('a disk with room for the records but not for the pre-allocated space (spec §11.6, TJ-DUR-022)', () => {
  for (const code of ['ENOSPC', 'EDQUOT']) {
    for (const durability of ['every', 'group', 'none'] as const) {
      for (const now of [false, true]) {
        it(`${code}, ${durability} mode, ${now ? 'synchronous' : 'asynchronous'} writes: every record that fits is acknowledged and read back; the first that does not is refused naming the errno`, async () => {
          const file = join(tempDir('tj-room-'), 'events.jsonl');
          const capacity = 2_000;
          const writer = await AppendFile.open(file, { durability, fs: nearlyFull(capacity, code, now) });
          const results: string[] = [];
          let used = 0;
          for (let n = 0; results.at(-1) !== code && n < 40; n++) {
            const result = await settle(
              writer.appendRecord(eventRecord(n)).then(() => (durability === 'none' ? writer.flush() : undefined)),
            );
            results.push(result);
            if (result === 'ok') used = writer.size;
          }
          const acked = results.filter((result) => result === 'ok').length;
          // Every record whose line fits in the room was acknowledged; the next one did not fit.
          const lineBytes = used / acked;
          expect(acked).toBeGreaterThan(0);
          expect(capacity - used).toBeLessThan(lineBytes + 2);
          expect(results).toEqual([...Array.from({ length: acked }, () => 'ok'), code]);
          await writer.close();
          // The file holds exactly the acknowledged records, and the reader finds nothing wrong with it.
          const contents = await readAll(file);
          expect(contents.records.map((record) => record.value.seq)).toEqual(
            Array.from({ length: acked }, (_, n) => n + 1),
          );
          expect(contents.findings).toEqual([]);
          expect(readFileSync(file).length).toBe(used);
        });
      }
    }
  }

  it('a failed truncation before the retry: the append reports the ENOSPC of its write, and the file holds only whole lines', async () => {
    const file = join(tempDir('tj-room-'), 'events.jsonl');
    const fs = faultyFileSystem(nearlyFull(2_000, 'ENOSPC', false));
    const writer = await AppendFile.open(file, { durability: 'every', fs });
    await writer.appendRecord(eventRecord(0));
    // The next append crosses the space: its write fails (ENOSPC), and so does the truncation of what it left (EIO).
    fs.inject({ op: 'write', path: file, errno: 'ENOSPC' }, { op: 'ftruncate', path: file, errno: 'EIO' });
    let n = 1;
    let failure: unknown;
    for (; failure === undefined && n < 40; n++)
      failure = await writer.appendRecord(eventRecord(n)).then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(fs.fired.map((fired) => fired.fault.op)).toEqual(['write', 'ftruncate']);
    expect(failure).toMatchObject({ code: 'write_failed', operation: 'write', errno: 'ENOSPC' });
    // The truncation after the failed write was tried again, and worked: the writer goes on.
    expect(writer.poisoned).toBe(false);
    await writer.appendRecord(eventRecord(n));
    await writer.close();
    const contents = await readAll(file);
    expect(contents.findings).toEqual([]);
    expect(contents.records.map((record) => record.value.seq)).toEqual([
      ...Array.from({ length: n - 1 }, (_, k) => k + 1),
      n + 1,
    ]);
  });

  it('a turn journal on a disk with 3,000 bytes left takes its submissions, and a reopen knows them', async () => {
    const dir = tempDir('tj-room-');
    const fs = nearlyFull(3_000, 'ENOSPC', true);
    const journal = await openTurnJournal({ dir, sessionId: 's1', fs });
    const outcomes: string[] = [];
    for (let n = 0; n < 5; n++) outcomes.push(await settle(journal.submit({ turnId: `t${n}`, content: `hello ${n}` })));
    expect(outcomes).toEqual(['ok', 'ok', 'ok', 'ok', 'ok']);
    await journal.close();
    const reopened = await openTurnJournal({ dir, sessionId: 's1', fs });
    expect([0, 1, 2, 3, 4].map((n) => reopened.stateOf(`t${n}`))).toEqual(Array(5).fill('submitted'));
    await reopened.workerStarted('t0');
    await reopened.close();
    const check = await checkStore([dir]);
    expect(check.findings.filter((finding) => finding.severity === 'error')).toEqual([]);
  });
});

/** True when util-linux `prlimit` runs here (Linux). */
const PRLIMIT = spawnSync('prlimit', ['--version'], { stdio: 'ignore', timeout: 10_000 }).status === 0;

/** A child that submits 20 turns with the built package and prints each outcome (`ok` or the errno). */
const SUBMIT_TWENTY = `
const { openTurnJournal } = await import(process.argv[1]);
const journal = await openTurnJournal({ dir: process.argv[2], sessionId: 's1' });
const outcomes = [];
for (let n = 0; n < 20; n++)
  outcomes.push(await journal.submit({ turnId: 't' + n, content: 'hello ' + n }).then(() => 'ok', (error) => error.errno ?? error.code));
await journal.close();
console.log(outcomes.join(','));
`;

describe('the same on the real kernel: a file-size limit (RLIMIT_FSIZE) below the pre-allocated space', () => {
  it.skipIf(!PRLIMIT)(
    'a process limited to 3,000-byte files submits 20 turns of ~130 bytes: the kernel writes up to the limit, EFBIG refuses the rest of the space, and the lines are written alone',
    () => {
      const dir = tempDir('tj-room-');
      const built = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'index.js');
      const child = spawnSync(
        'prlimit',
        ['--fsize=3000', process.execPath, '--input-type=module', '-e', SUBMIT_TWENTY, built, dir],
        { encoding: 'utf8', timeout: 20_000 },
      );
      expect(child.stderr).toBe('');
      expect(child.stdout.trim()).toBe(Array(20).fill('ok').join(','));
      const lines = readFileSync(join(dir, 's1.jsonl'), 'utf8').trim().split('\n');
      expect(lines.map((line) => (JSON.parse(line) as { turn_id: string }).turn_id)).toEqual(
        Array.from({ length: 20 }, (_, n) => `t${n}`),
      );
    },
  );
});
