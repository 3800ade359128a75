import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { processGroupMembers } from '../../process-group.js';
import { Random } from '../../random.js';
import { freshDir } from '../fresh-dir.js';
import { answerCode, openHandle, type WriterContext, withAdapter } from './context.js';
import { target, withoutSpace, writerRecord } from './support.js';

// `writer/short-write`: a write the kernel cuts short. The harness lowers the adapter's file-size limit
// (RLIMIT_FSIZE, with util-linux `prlimit`) to the middle of the next line: the kernel then writes the first half and
// returns a short count, and the next write of the rest fails with EFBIG. A writer must go on writing after a short
// write (TJ-DUR-002) — which meets the error — and must then truncate the half line away or refuse every later append
// (TJ-DUR-023). Once the limit is lifted, one more append shows which.

/** Why the check was skipped: a claim it leaves unproven. */
export const PRLIMIT_MISSING =
  'prlimit (util-linux; Linux only) is not available: how the writer handles a short write is NOT PROVEN. Install util-linux and run again.';

/** True when `prlimit` runs here. */
function prlimitAvailable(): boolean {
  if (process.platform !== 'linux') return false;
  return spawnSync('prlimit', ['--version'], { stdio: 'ignore', timeout: 10_000 }).status === 0;
}

/** The soft file-size limit of `pid`, as `prlimit` takes it (`unlimited` or a byte count). */
function softFileSizeLimit(pid: number): string {
  const line = readFileSync(`/proc/${pid}/limits`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('Max file size'));
  return line?.slice('Max file size'.length).trim().split(/\s+/)[0] ?? 'unlimited';
}

/** Sets the soft file-size limit of every pid; throws when `prlimit` refuses one that still runs. */
function setSoftFileSizeLimit(pids: readonly number[], soft: string): void {
  for (const pid of pids) {
    const run = spawnSync('prlimit', ['--pid', String(pid), `--fsize=${soft}:`], { encoding: 'utf8', timeout: 10_000 });
    if (run.status !== 0 && readdirSync('/proc').includes(String(pid)))
      throw new Error(`prlimit --pid ${pid} --fsize=${soft}: failed: ${run.stderr.trim()}`);
  }
}

/**
 * The failures of the file's bytes, given which of the records with `x_tj_seq` 0..3 were acknowledged: every line
 * whole, the acknowledged records and only they, in order.
 */
export function shortWriteFailures(bytes: string, acknowledged: readonly boolean[]): string[] {
  const lines = bytes.split('\n');
  const failures: string[] = [];
  if (lines.at(-1) !== '')
    failures.push(`the file ends with ${JSON.stringify(lines.at(-1)?.slice(-60))}, part of a line (TJ-DUR-023)`);
  const seqs: unknown[] = [];
  for (const line of lines.slice(0, -1)) {
    try {
      seqs.push((JSON.parse(line) as { x_tj_seq?: unknown }).x_tj_seq);
    } catch {
      failures.push(
        `the file holds a line that is no whole record, the bytes of a cut-short write left behind (TJ-DUR-023): ${JSON.stringify(line.slice(0, 80))}…`,
      );
    }
  }
  const expected = acknowledged.flatMap((ok, seq) => (ok ? [seq] : []));
  if (acknowledged[2] === true && !seqs.includes(2))
    failures.push(
      'the append cut short by the file-size limit was acknowledged, but its line is not whole in the file: the writer did not write the rest (TJ-DUR-002)',
    );
  if (acknowledged[2] === true && seqs.includes(2))
    failures.push(
      'the append under a file-size limit at the middle of its line was acknowledged whole: the limit did not reach the process that writes, so nothing was proven',
    );
  if (failures.length === 0 && JSON.stringify(seqs) !== JSON.stringify(expected))
    failures.push(
      `the file holds records ${JSON.stringify(seqs)}; the acknowledged ones were ${JSON.stringify(expected)}`,
    );
  return failures;
}

/** `writer/short-write` (TJ-DUR-002, TJ-DUR-023). */
export async function shortWriteCheck(context: WriterContext): Promise<void> {
  const { claims, modes, seed, recorder } = context;
  await recorder.record(
    'writer/short-write',
    'a write cut short by the file-size limit is completed or refused, and a refused line leaves no byte behind',
    'writer',
    ['TJ-DUR-002', 'TJ-DUR-023'],
    async () => {
      if (modes.length === 0) return { skip: 'no durability mode with an acknowledgement promise claimed' };
      if (!prlimitAvailable()) return { skip: PRLIMIT_MISSING, unproven: true };
      const dir = freshDir('tj-conf-short-');
      try {
        const { family, file } = target(claims, dir);
        const random = new Random(seed + 11);
        const records = [0, 1, 2, 3].map((seq) => writerRecord(family, seq, random));
        const acknowledged: boolean[] = [];
        await withAdapter(context, async (process) => {
          const handle = await openHandle(process, file, modes[0] as string);
          const append = async (seq: number) =>
            acknowledged.push((await answerCode(process.request('append', { handle, record: records[seq] }))) === 'ok');
          await append(0);
          await append(1);
          const pids = processGroupMembers(process.pid as number);
          const original = softFileSizeLimit(process.pid as number);
          // Where the lines end: the file may be longer by pre-allocated space (spec §3.8), which the next line
          // overwrites; a limit inside the space still cuts that write short.
          const size = withoutSpace(readFileSync(file)).length;
          const half = Math.floor(Buffer.byteLength(`${JSON.stringify(records[2])}\n`) / 2);
          setSoftFileSizeLimit(pids, String(size + half));
          try {
            await append(2);
          } finally {
            setSoftFileSizeLimit(pids, original);
          }
          await append(3);
          await answerCode(process.request('close', { handle }));
        });
        const failures =
          acknowledged[0] && acknowledged[1] ? [] : ['the two appends before the limit were not acknowledged'];
        return {
          failures: [
            ...failures,
            ...shortWriteFailures(withoutSpace(readFileSync(file)).toString('utf8'), acknowledged),
          ],
        };
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
}
