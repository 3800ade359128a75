import { closeSync, openSync, readFileSync, rmSync, utimesSync, writeFileSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { currentBootId } from '@turnjournal/reader/store-format';
import { Random } from '../../random.js';
import { freshDir } from '../fresh-dir.js';
import { answerCode, openHandle, type WriterContext, withAdapter } from './context.js';
import { lockKeptCheck } from './foreign-host-lock.js';
import { impossiblePid, lockText, plantLock, target, writerRecord } from './support.js';

/**
 * A PID namespace no process of this kit's machine is in: real ones are `pid:[<inode>]` with inodes in the billions
 * (nsfs), so the lock names another container of this kernel.
 */
const OTHER_NAMESPACE = 'pid:[1]';

/** How long the harness waits for a take-over of an expired lease: a hang guard, many times the planted lease. */
const TAKEOVER_GUARD_MS = 30_000;
const PLANTED_LEASE_MS = 300;

/** The lock fields that say "this machine": its host name and, where it has one, its boot id. */
function thisMachine(): { host: string; boot_id?: string } {
  const bootId = currentBootId();
  return bootId === null ? { host: hostname() } : { host: hostname(), boot_id: bootId };
}

/**
 * `writer/foreign-namespace-lock`: a lock held by a writer in another PID namespace of this machine (another container
 * on the same kernel) whose lease is fresh is not taken over, although its pid does not exist here (TJ-DUR-038). A
 * writer that judges it by its pid takes it over: two owners of one file.
 */
export function foreignNamespaceLockCheck(context: WriterContext): Promise<void> {
  return lockKeptCheck(context, {
    id: 'writer/foreign-namespace-lock',
    title:
      'a lock held in another PID namespace with a fresh lease is not taken over, even when its pid does not exist here',
    requirements: ['TJ-DUR-038', 'TJ-DUR-018'],
    holder: {
      pid: impossiblePid(),
      ...thisMachine(),
      token: 'other-namespace-holder',
      pid_ns: OTHER_NAMESPACE,
      lease_ms: 600_000,
    },
    takenOverBecause:
      'open took over a lock held in another PID namespace whose lease is fresh (its pid proves nothing here, TJ-DUR-038)',
  });
}

/**
 * `writer/expired-lease-lock`: a lock left in another PID namespace of this machine whose lease expired long ago is
 * taken over (TJ-DUR-039), although its pid is a running process here (the pid of a restarted container's own writer,
 * or of this harness). A writer that judges it by its pid waits for ever.
 *
 * The harness then plays the presumed-dead holder, which still runs: it kept the file open from before the take-over
 * and writes through that descriptor where its next record would go. The new owner's acknowledged record must be
 * intact in the file (TJ-DUR-041): a writer that appends to the file in place, instead of replacing it with a copy,
 * lets the old holder's write land on it.
 */
export async function expiredLeaseLockCheck(context: WriterContext): Promise<void> {
  const { claims, modes, recorder } = context;
  await recorder.record(
    'writer/expired-lease-lock',
    'a lock left in another PID namespace with a long-expired lease is taken over, even when its pid runs here',
    'writer',
    ['TJ-DUR-039', 'TJ-DUR-041', 'TJ-DUR-019'],
    async () => {
      const dir = freshDir('tj-conf-expired-');
      const where = target(claims, dir);
      const planted = plantLock(where.file, {
        pid: globalThis.process.pid,
        ...thisMachine(),
        token: 'expired-lease-holder',
        pid_ns: OTHER_NAMESPACE,
        lease_ms: PLANTED_LEASE_MS,
      });
      const anHourAgo = new Date(Date.now() - 3_600_000);
      utimesSync(`${where.file}.lock`, anHourAgo, anHourAgo);
      const random = new Random(39);
      const first = `${JSON.stringify(writerRecord(where.family, 0, random))}\n`;
      writeFileSync(where.file, first);
      const oldHolder = openSync(where.file, 'r+');
      try {
        return await withAdapter(context, async (process) => {
          const guardMs = TAKEOVER_GUARD_MS * context.timeoutScale;
          const deadline = Date.now() + guardMs;
          let handle: string | null = null;
          let code = 'journal_locked';
          while (code === 'journal_locked' && Date.now() < deadline) {
            code = await answerCode(
              openHandle(process, where.file, modes[0] as string).then((h) => {
                handle = h;
              }),
            );
            if (code === 'journal_locked') await new Promise((resolve) => setTimeout(resolve, 100));
          }
          if (code !== 'ok')
            return {
              failures: [
                code === 'journal_locked'
                  ? `open still answered journal_locked ${guardMs / 1000} s after the planted lease (${PLANTED_LEASE_MS} ms) had long expired (TJ-DUR-039)`
                  : `open of a file with an expired lease answered ${code}`,
              ],
            };
          const failures: string[] = [];
          const held = lockText(where.file);
          if (held === null || held === planted) failures.push('after open, the file holds no lock of the new writer');
          const acked = writerRecord(where.family, 1, random);
          await process.request('append', { handle, record: acked });
          // The old holder wakes and writes its next line where it believes the file ends.
          const late = Buffer.from(
            `${JSON.stringify({ ...writerRecord(where.family, 99, random), x_tj_late: true })}\n`,
          );
          writeSync(oldHolder, late, 0, late.length, Buffer.byteLength(first));
          const text = readFileSync(where.file, 'utf8');
          if (!text.includes(`"x_tj_seq":1`) || text.includes('"x_tj_late"'))
            failures.push(
              'a write of the presumed-dead holder, through the descriptor it kept, overwrote the new owner’s acknowledged record: the file was not replaced before the take-over’s first append (TJ-DUR-041)',
            );
          await process.request('close', { handle });
          return { failures };
        });
      } finally {
        closeSync(oldHolder);
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
}
