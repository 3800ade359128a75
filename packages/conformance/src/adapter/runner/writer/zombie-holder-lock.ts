import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { currentBootId, currentPidNamespace } from '@turnjournal/reader/store-format';
import { freshDir } from '../fresh-dir.js';
import { answerCode, openHandle, type WriterContext, withAdapter } from './context.js';
import { lockText, plantLock, target } from './support.js';

/** How long the harness waits for its grandchild to become a zombie: a hang guard, hundreds of times what it takes. */
const ZOMBIE_GUARD_MS = 20_000;

/** A process that has exited and that its parent does not reap: `kill(pid, 0)` succeeds for it, yet it runs no more. */
interface Zombie {
  readonly pid: number;
  /** Kills the parent, so that init reaps the zombie. */
  readonly release: () => void;
}

/** The state letter of `/proc/<pid>/stat` (`Z` for a zombie), or null when the process is gone. */
function processState(pid: number): string | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ESRCH')
      return null;
    throw error;
  }
  // The command name in parentheses may itself hold ") ": the state follows the last one.
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
}

/**
 * A zombie: a shell starts a short-lived Node.js process in the background, then becomes (`exec`) a Node.js process that
 * sleeps. The background process outlives the `exec` (the shell must not reap it first), and its new parent reaps only
 * the children it spawned itself, so once it exits it stays a zombie. Needs only `sh` and this Node.js binary.
 */
async function makeZombie(guardMs: number): Promise<Zombie> {
  const script =
    '"$TJ_NODE" -e "setTimeout(() => {}, 100)" & echo $!; exec "$TJ_NODE" -e "setTimeout(() => {}, 600000)"';
  const shell: ChildProcess = spawn('sh', ['-c', script], {
    stdio: ['ignore', 'pipe', 'ignore'],
    env: { ...process.env, TJ_NODE: process.execPath },
  });
  const release = () => {
    shell.kill('SIGKILL');
  };
  try {
    const pid = Number(
      await new Promise<string>((resolve, reject) => {
        shell.stdout?.once('data', (chunk) => resolve(String(chunk).trim()));
        shell.once('error', reject);
        shell.once('exit', (code) => reject(new Error(`the zombie's parent shell exited early (${code})`)));
      }),
    );
    if (!Number.isInteger(pid) || pid <= 0) throw new Error(`the zombie's parent shell printed no pid (${pid})`);
    const deadline = Date.now() + guardMs;
    while (processState(pid) !== 'Z') {
      if (Date.now() > deadline) throw new Error(`process ${pid} did not become a zombie within ${guardMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return { pid, release };
  } catch (error) {
    release();
    throw error;
  }
}

/**
 * `writer/zombie-holder-lock`: a lock of this host and PID namespace whose holder was killed and is a zombie its parent
 * has not reaped yet is taken over (spec §11.4, TJ-DUR-019): `kill(pid, 0)` succeeds for a zombie, yet it holds
 * nothing. A writer that takes that success for a live holder never opens the file until someone reaps the zombie.
 */
export async function zombieHolderLockCheck(context: WriterContext): Promise<void> {
  const { claims, modes, recorder } = context;
  await recorder.record(
    'writer/zombie-holder-lock',
    'a lock whose holder is a killed process not yet reaped (a zombie) is taken over; close removes the new lock',
    'writer',
    ['TJ-DUR-019', 'TJ-DUR-026', 'TJ-CONF-026'],
    async () => {
      // Zombies are observable only through /proc (Linux); elsewhere nothing can tell one from a live holder.
      if (!existsSync('/proc/self/stat')) return { skip: 'no /proc on this system: a zombie cannot be told apart' };
      const dir = freshDir('tj-conf-zombie-');
      const where = target(claims, dir);
      let zombie: Zombie;
      try {
        zombie = await makeZombie(ZOMBIE_GUARD_MS * context.timeoutScale);
      } catch (error) {
        // Without a zombie the check shows nothing: not proven, never passed, and no failure of the implementation.
        rmSync(dir, { recursive: true, force: true });
        return { skip: `the harness could not make a zombie holder: ${(error as Error).message}`, unproven: true };
      }
      try {
        // The lock as a writer of this host and namespace writes it (spec §11.4), its lease fresh: judged by its pid.
        const namespace = currentPidNamespace();
        const bootId = currentBootId();
        const planted = plantLock(where.file, {
          pid: zombie.pid,
          host: hostname(),
          token: 'zombie-holder',
          ...(bootId === null ? {} : { boot_id: bootId }),
          ...(namespace === null ? {} : { pid_ns: namespace, lease_ms: 600_000 }),
        });
        return await withAdapter(context, async (process) => {
          const failures: string[] = [];
          let handle: string | null = null;
          const code = await answerCode(
            openHandle(process, where.file, modes[0] as string).then((h) => {
              handle = h;
            }),
          );
          // The zombie must still be one when the writer looked, or the check proved nothing about zombies.
          if (processState(zombie.pid) !== 'Z')
            throw new Error(`the zombie holder ${zombie.pid} was reaped during the check: run it again`);
          if (code !== 'ok')
            return {
              failures: [
                code === 'journal_locked'
                  ? `open answered journal_locked for a lock whose holder ${zombie.pid} is a zombie (killed, not yet reaped): kill(pid, 0) succeeds for a zombie, but it no longer runs (TJ-DUR-019)`
                  : `open of a file whose lock holder is a zombie answered ${code}`,
              ],
            };
          const held = lockText(where.file);
          if (held === null || held === planted) failures.push('after open, the file holds no lock of the new writer');
          await process.request('close', { handle });
          if (lockText(where.file) !== null) failures.push('close left the lock file behind (TJ-DUR-026)');
          return { failures };
        });
      } finally {
        zombie.release();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
}
