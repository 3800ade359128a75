import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { straceAvailable } from '../../strace.js';
import { freshDir } from '../fresh-dir.js';
import { spawnAdapter, started, type WriterContext } from './context.js';
import { claimsFeature, STRACE_MISSING } from './support.js';

// `writer/sweep-recheck` (feature `retention`; TJ-RET-015): a writer appends to a journal after the sweep audited it
// and before the sweep holds its lock. The harness makes that window wide and certain: strace delays the sweep's first
// system call on the journal's lock file by a second (`-P <lock> -e inject=…:delay_enter`), prints that call as it
// enters, and the harness appends a new turn as soon as it sees it. A sweep that rewrites from what it audited loses
// that turn; one that checks the files after taking the locks (or takes them before it reads) keeps it.

/** How long strace holds the sweep's first call on the lock, in microseconds. */
const DELAY_US = 1_000_000;
/** The harness's "now", and a window of an hour: `t1` is old, the late `t2` young. */
const NOW_MS = Date.UTC(2026, 5, 20, 12, 0, 0);

const line = (fields: Record<string, unknown>) => `${JSON.stringify({ version: 1, session_id: 'a', ...fields })}\n`;

/** `writer/sweep-recheck`. */
export async function sweepRecheckCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/sweep-recheck',
    'a sweep keeps a turn appended after its audit and before it held the lock: it skips a session whose files changed',
    'writer',
    ['TJ-RET-015'],
    async () => {
      if (!claimsFeature(context.claims, 'retention')) return { skip: 'feature retention not claimed' };
      if (!context.claims.families.includes('turn')) return { skip: 'family turn not claimed' };
      if (context.strace === 'never') return { skip: 'disabled: not proven', unproven: true };
      if (!straceAvailable()) return { skip: STRACE_MISSING, unproven: true };
      const dir = freshDir('tj-conf-recheck-');
      const journal = join(dir, 'store', '_turn_journal', 'a.jsonl');
      const traceFile = join(dir, 'trace.txt');
      const syscalls = 'link,linkat,open,openat,rename,renameat,renameat2';
      const adapter = spawnAdapter(context, [
        'strace',
        '-f',
        '-qq',
        '-P',
        `${journal}.lock`,
        '-e',
        `trace=${syscalls}`,
        '-e',
        `inject=${syscalls}:delay_enter=${DELAY_US}:when=1`,
        '-o',
        traceFile,
        '--',
      ]);
      try {
        const old = NOW_MS / 1000 - 3 * 3600;
        mkdirSync(join(dir, 'store', '_turn_journal'), { recursive: true });
        writeFileSync(
          journal,
          line({ event: 'submitted', turn_id: 't1', created_at: old, role: 'user', content: 'hello' }) +
            line({ event: 'completed', turn_id: 't1', created_at: old }),
        );
        const late = line({
          event: 'submitted',
          turn_id: 't2',
          created_at: NOW_MS / 1000,
          role: 'user',
          content: 'late',
        });
        await started(adapter);
        const sweeping = adapter.request('sweep', { root: join(dir, 'store'), now: NOW_MS, window_s: 3600 });
        // Append as soon as the sweep's first call on the lock shows in the trace (strace prints it as it enters).
        let seen = false;
        for (let waited = 0; waited < 5000 && !seen; waited += 10) {
          await new Promise((resolve) => setTimeout(resolve, 10));
          seen = existsSync(traceFile) && readFileSync(traceFile, 'utf8').includes('.lock');
        }
        appendFileSync(journal, late);
        const answer = (await sweeping) as { sessions?: { session_id: string; pruned: string[] }[] };
        await adapter.stop();
        const failures: string[] = [];
        if (!seen)
          failures.push('the sweep made no system call on the journal lock within 5 s: it never took the writer lock');
        const text = readFileSync(journal, 'utf8');
        if (!text.includes(late.trimEnd()))
          failures.push(
            'the turn appended after the sweep audited the journal, before it held the lock, is gone: the sweep rewrote the journal from its stale audit (TJ-RET-015)',
          );
        const pruned = answer.sessions?.find((s) => s.session_id === 'a')?.pruned ?? [];
        for (const id of pruned)
          if (text.includes(`"turn_id":"${id}"`))
            failures.push(`the sweep answered it pruned ${id}, but the journal still holds its records`);
        return { failures };
      } finally {
        await adapter.dispose();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
}
