import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { WriterContext } from './context.js';
import { writeRecoveryStore } from './recovery.js';
import { claimsFeature } from './support.js';
import { answerAt, syncedBetween, type TraceStep, traceSteps } from './trace-steps.js';
import { withTracedAdapter } from './traced-adapter.js';

// The strace-based checks of what a writer does to a store besides appending: the directories it creates
// (`writer/durable-directories`), the records startup recovery appends (`writer/recover-durable`), and the files a
// sweep rewrites (`writer/sweep-rewrite`). Each looks at the syscalls the adapter made before it answered.

/**
 * TJ-DUR-008: every directory the trace shows created before position `before` had its parent synced after its
 * creation and before `before`. Returns one line per violation, and one when no directory was created at all (the
 * check would prove nothing).
 */
export function unsyncedDirectories(steps: readonly TraceStep[], before: number, what: string): string[] {
  const created = steps.filter((s) => s.kind === 'mkdir' && s.at < before);
  if (created.length === 0) return [`${what} created no directory (no mkdir in the trace): nothing to check`];
  return created.flatMap((made) => {
    const parent = dirname(made.path as string);
    return syncedBetween(steps, parent, made.at, before)
      ? []
      : [`${what} created ${made.path} and answered without an fsync of its parent ${parent} after it (TJ-DUR-008)`];
  });
}

/**
 * TJ-DUR-009 and TJ-RET-008: between positions `after` and `before`, `target` was replaced by renaming a temporary
 * file of its own directory that was written and then synced, and the directory was synced after the rename; with
 * `lock`, the writer lock `<target>.lock` appeared (a link, rename or creating open) before the rename and was not
 * removed until after it.
 */
export function unsafeReplace(
  steps: readonly TraceStep[],
  target: string,
  before: number,
  { after = -1, lock: needsLock = true }: { after?: number; lock?: boolean } = {},
): string[] {
  const rename = steps.find(
    (s) => s.kind === 'link' && s.moved === true && s.path === target && s.at > after && s.at < before,
  );
  if (rename === undefined)
    return [`${target} was not replaced by a rename before the answer (TJ-DUR-009: temporary file, fsync, rename)`];
  const problems: string[] = [];
  const temporary = rename.from as string;
  const dir = dirname(target);
  if (dirname(temporary) !== dir)
    problems.push(`${target} was replaced by ${temporary}, which is not in the same directory (TJ-DUR-009)`);
  const lastWrite = steps.filter((s) => s.kind === 'write' && s.path === temporary && s.at < rename.at).pop();
  if (lastWrite === undefined) problems.push(`the temporary file ${temporary} was not written before the rename`);
  else if (!syncedBetween(steps, temporary, lastWrite.at, rename.at))
    problems.push(`the temporary file ${temporary} was renamed over ${target} before it was synced (TJ-DUR-009)`);
  if (!syncedBetween(steps, dir, rename.at, before))
    problems.push(`the directory ${dir} was not synced after the rename, before the answer (TJ-DUR-009)`);
  if (!needsLock) return problems;
  const lock = `${target}.lock`;
  const taken = steps.filter(
    (s) => s.path === lock && s.at < rename.at && (s.kind === 'link' || (s.kind === 'open' && s.creates === true)),
  );
  const lastTaken = taken.at(-1);
  if (lastTaken === undefined)
    problems.push(`${target} was rewritten without taking its writer lock ${lock} first (TJ-RET-008)`);
  else if (steps.some((s) => s.kind === 'unlink' && s.path === lock && s.at > lastTaken.at && s.at < rename.at))
    problems.push(`the writer lock ${lock} was released before ${target} was replaced (TJ-RET-008)`);
  return problems;
}

/**
 * TJ-RECOV-007: every write to `file` that holds an `interrupted` record, before position `before`, was followed by a
 * sync of `file` before it. Returns one line per violation, and one when there was no such write.
 */
export function unsyncedInterruptions(steps: readonly TraceStep[], file: string, before: number): string[] {
  const writes = steps.filter(
    (s) => s.kind === 'write' && s.path === file && s.at < before && s.data?.includes('\\"event\\":\\"interrupted\\"'),
  );
  if (writes.length === 0) return [`recover answered before any interrupted record was written to ${file}`];
  const last = writes.at(-1) as TraceStep;
  return syncedBetween(steps, file, last.at, before)
    ? []
    : [`recover answered before ${file} was synced after its interrupted records were written (TJ-RECOV-007)`];
}

/** `writer/durable-directories` (feature `lifecycle`): `turn_submit` on an empty root creates `_turn_journal` durably. */
async function durableDirectoriesCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/durable-directories',
    'turn_submit on an empty store fsyncs the parent of every directory it creates before it answers (strace)',
    'writer',
    ['TJ-DUR-008'],
    async () => {
      if (!claimsFeature(context.claims, 'lifecycle')) return { skip: 'feature lifecycle not claimed' };
      if (!context.claims.families.includes('turn')) return { skip: 'family turn not claimed' };
      return withTracedAdapter(context, async ({ process, dir, trace }) => {
        const root = join(dir, 'store');
        mkdirSync(root);
        const params = { root, session_id: 's1', turn_id: 't1', content: 'hello' };
        const { id } = await process.requestWithId('turn_submit', params);
        await process.stop();
        const steps = traceSteps(trace());
        const at = answerAt(steps, id);
        if (at === undefined) return [`the answer to turn_submit (id ${id}) is not in the trace`];
        return unsyncedDirectories(steps, at, 'turn_submit');
      });
    },
  );
}

/** `writer/recover-durable` (feature `recovery`): the interrupted records are synced before `recover` answers. */
async function recoverDurableCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/recover-durable',
    'recover syncs the interrupted records it appends before it answers (strace)',
    'writer',
    ['TJ-RECOV-007'],
    async () => {
      if (!claimsFeature(context.claims, 'recovery')) return { skip: 'feature recovery not claimed' };
      if (!context.claims.families.includes('turn')) return { skip: 'family turn not claimed' };
      return withTracedAdapter(context, async ({ process, dir, trace }) => {
        const root = join(dir, 'store');
        writeRecoveryStore(root);
        const { id } = await process.requestWithId('recover', { root });
        await process.stop();
        const steps = traceSteps(trace());
        const at = answerAt(steps, id);
        if (at === undefined) return [`the answer to recover (id ${id}) is not in the trace`];
        return unsyncedInterruptions(steps, join(root, '_turn_journal', 's1.jsonl'), at);
      });
    },
  );
}

/** `writer/sweep-rewrite` (feature `retention`): a sweep replaces a journal atomically, holding its writer lock. */
async function sweepRewriteCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/sweep-rewrite',
    'a sweep rewrites a journal by temporary file, fsync, rename and directory fsync, holding its writer lock (strace)',
    'writer',
    ['TJ-DUR-009', 'TJ-RET-008'],
    async () => {
      if (!claimsFeature(context.claims, 'retention')) return { skip: 'feature retention not claimed' };
      if (!context.claims.families.includes('turn')) return { skip: 'family turn not claimed' };
      return withTracedAdapter(context, async ({ process, dir, trace }) => {
        const root = join(dir, 'store');
        const journal = join(root, '_turn_journal', 'a.jsonl');
        mkdirSync(dirname(journal), { recursive: true });
        const now = Date.UTC(2026, 5, 20, 12, 0, 0);
        const line = (event: string, turnId: string, at: number, extra = '') =>
          `{"version":1,"event":"${event}","turn_id":"${turnId}","session_id":"a","created_at":${at}${extra}}\n`;
        const old = now / 1000 - 3 * 3600;
        const young = now / 1000 - 600;
        const submitted = ',"role":"user","content":"hello"';
        writeFileSync(
          journal,
          line('submitted', 't1', old, submitted) +
            line('completed', 't1', old) +
            line('submitted', 't2', young, submitted) +
            line('completed', 't2', young),
        );
        const { id } = await process.requestWithId('sweep', { root, now, window_s: 3600 });
        await process.stop();
        const steps = traceSteps(trace());
        const at = answerAt(steps, id);
        if (at === undefined) return [`the answer to sweep (id ${id}) is not in the trace`];
        return unsafeReplace(steps, journal, at);
      });
    },
  );
}

/** The strace checks of directory creation, recovery and sweep rewrites (each skipped when its feature is not claimed). */
export async function tracedStoreOpsChecks(context: WriterContext): Promise<void> {
  await durableDirectoriesCheck(context);
  await recoverDurableCheck(context);
  await sweepRewriteCheck(context);
}
