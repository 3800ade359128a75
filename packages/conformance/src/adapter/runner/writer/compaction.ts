import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { openEventLog } from '@turnjournal/writer';
import { freshDir } from '../fresh-dir.js';
import { type WriterContext, withAdapter } from './context.js';
import { type JournalAccess, journalAccess } from './journal-access.js';
import { claimsFeature } from './support.js';

// The compaction check of feature `retention` (adapter.md §5.6, spec §14.2): event logs the harness writes with known
// ages, compacted by the adapter at a `now` the harness gives. The sweep check is in retention.ts.

/** The harness's "now": every age below is relative to it. */
const NOW_MS = Date.UTC(2026, 5, 20, 12, 0, 0);
const DAY_S = 24 * 3600;

/**
 * What the log `file` holds after its compaction: the file's exact bytes, or with `store-lines` its lines through the
 * adapter. Compared byte for byte with the original bytes from the cut on.
 */
async function compacted(context: WriterContext, journal: JournalAccess, file: string): Promise<Buffer> {
  if (context.storeLines) return journal.bytes(file);
  return existsSync(file) ? readFileSync(file) : Buffer.alloc(0);
}

/** The lines of an event log, and where its checkpoints are. */
interface PlannedLog {
  readonly bytes: Buffer;
  /** Byte offset of each checkpoint line, by name. */
  readonly checkpoints: Readonly<Record<string, number>>;
}

/** Which log {@link writeEventLog} writes. */
type LogShape = 'plain' | 'abandoned' | 'ahead';

/**
 * Writes an event log with the reference writer, at given times: `old` is 3 days before `NOW`, `young` 10 minutes.
 * - `r1` at `old`: started, done, acknowledged; checkpoint `c1`;
 * - `r2` at `old`: started, done, never acknowledged; checkpoint `c2`;
 * - `r3` at `young`: started, done, acknowledged; checkpoint `c3`;
 * - `r4` at `young`: started, never finished.
 * `abandoned`: the log ends after `c1` with a run `r0` started at `old` and never finished, and checkpoint `c2`.
 * `ahead`: the clock was 30 days ahead of `NOW` while `r1`, `r2` and their checkpoints were written, and was corrected
 * to `old` before `r3`, written then (TJ-RET-019).
 */
async function writeEventLog(file: string, shape: LogShape): Promise<PlannedLog> {
  const abandoned = shape === 'abandoned';
  let clock = shape === 'ahead' ? NOW_MS + 30 * DAY_S * 1000 : NOW_MS - 3 * DAY_S * 1000;
  const log = await openEventLog({ file, durability: 'none', clock: () => clock, checkpointInterval: 1_000_000 });
  const checkpoints: Record<string, number> = {};
  const checkpoint = async (name: string) => {
    await log.idle();
    checkpoints[name] = readFileSync(file).length;
    await log.checkpoint();
  };
  try {
    await log.appendMessage({ role: 'system', content: 'you are terse' });
    await log.chatStarted({ requestId: 'r1', content: 'one' });
    await log.chatDone({ requestId: 'r1' });
    await log.ack('r1');
    await checkpoint('c1');
    if (abandoned) {
      await log.chatStarted({ requestId: 'r0', content: 'never answered' });
      await checkpoint('c2');
      return { bytes: readFileSync(file), checkpoints };
    }
    await log.chatStarted({ requestId: 'r2' });
    await log.chatDone({ requestId: 'r2' });
    await checkpoint('c2');
    clock = shape === 'ahead' ? NOW_MS - 3 * DAY_S * 1000 : NOW_MS - 600_000;
    await log.chatStarted({ requestId: 'r3' });
    await log.chatDone({ requestId: 'r3' });
    await log.ack('r3');
    await checkpoint('c3');
    await log.chatStarted({ requestId: 'r4' });
  } finally {
    await log.close();
  }
  return { bytes: readFileSync(file), checkpoints };
}

/** Lines (LF-terminated) of `bytes`. */
function lineCount(bytes: Buffer): number {
  let count = 0;
  for (const byte of bytes) if (byte === 0x0a) count++;
  return count;
}

/** One compaction case: the windows it is run with, and the checkpoint the result must start at (null: no change). */
interface CompactionCase {
  readonly name: string;
  readonly log: LogShape;
  readonly windows: { window_s?: number; delivery_window_s?: number };
  readonly cutAt: 'c1' | 'c2' | 'c3' | null;
  readonly expired: readonly string[];
}

const COMPACTION_CASES: readonly CompactionCase[] = [
  // r2 finished 3 days ago, the delivery window is 2: expired, so everything before c2 goes; c3 is after young records.
  {
    name: 'window 1 day, delivery window 2 days',
    log: 'plain',
    windows: { window_s: DAY_S, delivery_window_s: 2 * DAY_S },
    cutAt: 'c2',
    expired: ['r2'],
  },
  // r2 is still within a 4-day delivery window: undelivered, it keeps c1 as the cut.
  {
    name: 'window 1 day, delivery window 4 days',
    log: 'plain',
    windows: { window_s: DAY_S, delivery_window_s: 4 * DAY_S },
    cutAt: 'c1',
    expired: [],
  },
  // Every record is younger than 4 days: nothing may go, though r2's delivery expired.
  {
    name: 'window 4 days, delivery window 1 day',
    log: 'plain',
    windows: { window_s: 4 * DAY_S, delivery_window_s: DAY_S },
    cutAt: null,
    expired: ['r2'],
  },
  // The defaults are 48 hours each: as in the first case.
  { name: 'default windows', log: 'plain', windows: {}, cutAt: 'c2', expired: ['r2'] },
  // r0 never finished: c2, after its first record, may not be the cut; c1 may.
  {
    name: 'an unfinished run before the last checkpoint',
    log: 'abandoned',
    windows: { window_s: DAY_S, delivery_window_s: 2 * DAY_S },
    cutAt: 'c1',
    expired: [],
  },
  // r1 and r2 were stamped 30 days ahead: they count as written when r3 was, 3 days ago (TJ-RET-019), so r2 expired
  // and everything before c3 may go; taken at their word, they would be young and r2 undelivered.
  {
    name: 'records stamped while the clock was 30 days ahead',
    log: 'ahead',
    windows: { window_s: DAY_S, delivery_window_s: 2 * DAY_S },
    cutAt: 'c3',
    expired: ['r2'],
  },
];

/**
 * `writer/compact` (feature `retention`): each case of {@link COMPACTION_CASES} compacts a fresh copy of a log the
 * harness wrote with known ages; the result must be the original bytes from the expected checkpoint on, byte for byte
 * — so retained seqs are untouched and no `delivery.ack` was written for an expired run (TJ-RET-012, -014, -018) —
 * and nothing a younger record, an undelivered run within its delivery window or an unfinished run protects may go
 * (TJ-RET-013). The answer gives the lines removed and the expired runs (TJ-CONF-035).
 */
export async function compactCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/compact',
    'compaction cuts an event log at the latest checkpoint retention allows, keeps the rest byte for byte with its seqs, and expires undelivered runs after the delivery window',
    'writer',
    ['TJ-RET-012', 'TJ-RET-013', 'TJ-RET-014', 'TJ-RET-018', 'TJ-RET-019', 'TJ-CONF-035'],
    async () => {
      if (!claimsFeature(context.claims, 'retention')) return { skip: 'feature retention not claimed' };
      if (!context.claims.families.includes('event')) return { skip: 'family event not claimed' };
      const root = freshDir('tj-conf-compact-');
      try {
        const failures: string[] = [];
        const logs = {
          plain: await writeEventLog(join(root, 'plain.jsonl'), 'plain'),
          abandoned: await writeEventLog(join(root, 'abandoned.jsonl'), 'abandoned'),
          ahead: await writeEventLog(join(root, 'ahead.jsonl'), 'ahead'),
        };
        await withAdapter(context, async (adapter) => {
          const journal = journalAccess(context, adapter);
          for (const [index, testCase] of COMPACTION_CASES.entries()) {
            const source = testCase.log;
            const log = logs[source];
            // A journal location of the layout (spec §4.4), which a writer on a record store maps to its journal.
            const file = join(root, `case-${index}`, 'events.jsonl');
            mkdirSync(dirname(file), { recursive: true });
            await journal.plant(file, log.bytes.toString('utf8'));
            const where = `${testCase.name}`;
            let answer: { removed_records: number; expired: string[] };
            try {
              answer = (await adapter.request('compact', { file, now: NOW_MS, ...testCase.windows })) as typeof answer;
            } catch (error) {
              failures.push(`${where}: compact failed: ${error instanceof Error ? error.message : String(error)}`);
              continue;
            }
            const cut = testCase.cutAt === null ? 0 : (log.checkpoints[testCase.cutAt] as number);
            const expected = log.bytes.subarray(cut);
            const after = await compacted(context, journal, file);
            if (!after.equals(expected))
              failures.push(
                testCase.cutAt === null
                  ? `${where}: the log changed (${log.bytes.length} → ${after.length} bytes), though nothing before any checkpoint may go`
                  : `${where}: the log is not its original bytes from checkpoint ${testCase.cutAt} on (${after.length} bytes, expected ${expected.length})`,
              );
            const removed = lineCount(log.bytes.subarray(0, cut));
            if (answer.removed_records !== removed)
              failures.push(`${where}: answered removed_records ${answer.removed_records}, not ${removed}`);
            if (JSON.stringify([...answer.expired].sort()) !== JSON.stringify(testCase.expired))
              failures.push(
                `${where}: answered expired ${JSON.stringify(answer.expired)}, not ${JSON.stringify(testCase.expired)}`,
              );
          }
        });
        return { failures };
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
  );
}

/**
 * A log with two checkpoints the reference writer split (a 4 KiB line-size limit, TJ-EVENT-028), all of it old, and
 * where the compaction must cut it: at the first part of the second set; with `tornLast`, that set lacks its last part
 * (a crash between parts) and a record follows, so the cut is the first set's first part.
 */
async function writeSplitLog(file: string, tornLast: boolean): Promise<{ bytes: Buffer; cut: number }> {
  const clock = NOW_MS - 3 * DAY_S * 1000;
  const log = await openEventLog({
    file,
    durability: 'none',
    clock: () => clock,
    maxLineBytes: 4096,
    checkpointInterval: 1_000_000,
  });
  let firstSet: number;
  try {
    for (let i = 0; i < 60; i++) await log.appendMessage({ role: 'user', content: `${i} ${'x'.repeat(300)}` });
    await log.idle();
    firstSet = readFileSync(file).length;
    await log.checkpoint();
    await log.appendMessage({ role: 'assistant', content: 'after the first set' });
    await log.idle();
    const secondSet = readFileSync(file).length;
    await log.checkpoint();
    if (!tornLast) {
      await log.appendMessage({ role: 'assistant', content: 'after the second set' });
      await log.close();
      return { bytes: readFileSync(file), cut: secondSet };
    }
  } finally {
    await log.close();
  }
  // Drop the second set's last part, and append a record after what is left of it.
  const lines = readFileSync(file).toString('utf8').split('\n').slice(0, -1);
  const last = JSON.parse(lines.at(-1) as string) as { seq: number };
  const kept = `${lines.slice(0, -1).join('\n')}\n`;
  const next = { seq: last.seq, ts: new Date(clock).toISOString(), type: 'message_append' };
  const bytes = Buffer.from(
    `${kept}${JSON.stringify({ ...next, payload: { message: { role: 'user', content: 'x' } } })}\n`,
  );
  return { bytes, cut: firstSet };
}

/**
 * `writer/compact-split-checkpoint` (feature `retention`): a log whose checkpoints are split over several lines
 * (spec §6.2) is cut at the first part of its last complete split checkpoint, and a set whose last part is missing is
 * no cut (TJ-RET-021): the result is the original bytes from that first part on.
 */
export async function compactSplitCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/compact-split-checkpoint',
    'compaction cuts an event log at the first part of its last complete split checkpoint, never at an incomplete one',
    'writer',
    ['TJ-RET-021', 'TJ-RET-012'],
    async () => {
      if (!claimsFeature(context.claims, 'retention')) return { skip: 'feature retention not claimed' };
      if (!context.claims.families.includes('event')) return { skip: 'family event not claimed' };
      const root = freshDir('tj-conf-compact-split-');
      try {
        const failures: string[] = [];
        const cases = { complete: await writeSplitLog(join(root, 'complete.jsonl'), false) };
        const torn = await writeSplitLog(join(root, 'torn.jsonl'), true);
        await withAdapter(context, async (adapter) => {
          const journal = journalAccess(context, adapter);
          for (const [name, log] of Object.entries({ ...cases, 'last part missing': torn })) {
            const file = join(root, `case-${name.replace(/ /g, '-')}`, 'events.jsonl');
            mkdirSync(dirname(file), { recursive: true });
            await journal.plant(file, log.bytes.toString('utf8'));
            try {
              await adapter.request('compact', { file, now: NOW_MS, window_s: DAY_S, delivery_window_s: DAY_S });
            } catch (error) {
              failures.push(`${name}: compact failed: ${error instanceof Error ? error.message : String(error)}`);
              continue;
            }
            const after = await compacted(context, journal, file);
            const expected = log.bytes.subarray(log.cut);
            if (!after.equals(expected))
              failures.push(
                `${name}: the log is not its original bytes from byte ${log.cut} on (${after.length} bytes, expected ${expected.length})`,
              );
          }
        });
        return { failures };
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
  );
}
