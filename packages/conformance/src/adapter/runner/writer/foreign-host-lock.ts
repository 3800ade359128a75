import { rmSync } from 'node:fs';
import type { LockHolder } from '@turnjournal/reader/store-format';
import { freshDir } from '../fresh-dir.js';
import { answerCode, openHandle, type WriterContext, withAdapter } from './context.js';
import { impossiblePid, lockText, plantLock, target } from './support.js';

/** A check that a planted lock whose holder cannot be proved dead is not taken over (see {@link lockKeptCheck}). */
export interface LockKeptCheck {
  readonly id: string;
  readonly title: string;
  readonly requirements: readonly string[];
  /** The lock the harness plants; `token` names it. */
  readonly holder: LockHolder & { readonly token: string };
  /** Why taking it over is wrong, for the failure line. */
  readonly takenOverBecause: string;
}

/**
 * Plants `check.holder`'s lock on a fresh journal; `open` must answer `journal_locked` (TJ-DUR-018) and leave the
 * lock byte for byte as it was.
 */
export async function lockKeptCheck(context: WriterContext, check: LockKeptCheck): Promise<void> {
  const { claims, modes, recorder } = context;
  await recorder.record(check.id, check.title, 'writer', [...check.requirements], async () => {
    const dir = freshDir('tj-conf-kept-lock-');
    const where = target(claims, dir);
    const planted = plantLock(where.file, check.holder);
    try {
      return await withAdapter(context, async (process) => {
        const failures: string[] = [];
        const code = await answerCode(openHandle(process, where.file, modes[0] as string));
        if (code !== 'journal_locked')
          failures.push(code === 'ok' ? check.takenOverBecause : `expected error journal_locked, got ${code}`);
        if (lockText(where.file) !== planted) failures.push('the planted lock file was changed or removed');
        return { failures };
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

/**
 * `writer/foreign-host-lock`: a lock naming another host is never proved dead (TJ-DUR-020), even when its pid cannot
 * exist here — a writer that checks only the pid takes it over. Open must answer `journal_locked` and leave the lock.
 */
export function foreignHostLockCheck(context: WriterContext): Promise<void> {
  return lockKeptCheck(context, {
    id: 'writer/foreign-host-lock',
    title: 'a lock held on another host is not taken over, even when its pid cannot exist here',
    requirements: ['TJ-DUR-020', 'TJ-DUR-018', 'TJ-CONF-026'],
    holder: { pid: impossiblePid(), host: 'tj-conformance-foreign-host.invalid', token: 'foreign-holder' },
    takenOverBecause: 'open took over a lock held on another host (its holder cannot be proved dead, TJ-DUR-020)',
  });
}
