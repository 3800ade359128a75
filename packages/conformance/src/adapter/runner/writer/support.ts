import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { readJournal } from '@turnjournal/reader';
import { trailingNulCount } from '@turnjournal/reader/store-format';
import { truncate } from '../../process.js';
import type { StartResult } from '../../protocol.js';
import type { Random } from '../../random.js';

/** Why a strace-based check was skipped, and how to get strace: a durability claim it leaves unproven. */
export const STRACE_MISSING =
  'strace is not available or may not trace (Linux only; containers may forbid ptrace): durability before the acknowledgement is NOT PROVEN. Install it (Debian/Ubuntu: apt-get install strace; Fedora: dnf install strace; Alpine: apk add strace), allow ptrace, and run again.';

/** A feature an adapter can claim in its `start` answer (adapter.md §2). */
export type Feature = NonNullable<StartResult['features']>[number];

/**
 * `bytes` without the pre-allocated space at its end (spec §3.8): the NUL bytes that end the file. A writer may keep
 * that space while it holds the file open (and after a crash), so the harness compares and parses only the lines.
 */
export function withoutSpace(bytes: Buffer): Buffer {
  return bytes.subarray(0, bytes.length - trailingNulCount(bytes));
}

/** True when the adapter claims `feature`: the checks of an unclaimed feature are skipped. */
export function claimsFeature(claims: StartResult, feature: Feature): boolean {
  return (claims.features ?? []).includes(feature);
}

/** Where a writer check writes: the claimed family (turn preferred), the store root and the journal file. */
export interface Target {
  readonly family: 'turn' | 'event';
  readonly root: string;
  readonly file: string;
}

/** A journal file for the first claimed writable family, its directory created. */
export function target(claims: StartResult, dir: string): Target {
  const family = claims.families.includes('turn') ? 'turn' : 'event';
  const file = family === 'turn' ? join(dir, '_turn_journal', 's1.jsonl') : join(dir, 's1', 'events.jsonl');
  mkdirSync(dirname(file), { recursive: true });
  return { family, root: dir, file };
}

/** A record carrying its sequence number in an unknown member, so the oracle can find it in the file. */
export function writerRecord(family: 'turn' | 'event', seq: number, random: Random): Record<string, unknown> {
  const padding = 'x'.repeat(random.int(0, 300));
  return family === 'turn'
    ? {
        version: 1,
        event: 'submitted',
        turn_id: `t${String(seq).padStart(6, '0')}`,
        session_id: 's1',
        created_at: 1_770_000_000 + seq,
        role: 'user',
        content: `message ${seq} ${padding}`,
        x_tj_seq: seq,
      }
    : {
        seq,
        ts: '2026-06-19T03:14:07Z',
        type: 'message_append',
        payload: { message: { role: 'user', content: `message ${seq} ${padding}` } },
        x_tj_seq: seq,
      };
}

/** The `x_tj_seq` of the records in a file, in file order, and every finding of reading it. */
export async function survivors(file: string): Promise<{ seqs: number[]; findings: string[]; torn: boolean }> {
  const seqs: number[] = [];
  const findings: string[] = [];
  let torn = false;
  for await (const batch of readJournal(file)) {
    for (const item of batch) {
      if (item.kind === 'record') seqs.push(item.record.value.x_tj_seq as number);
      else if (item.finding.code === 'torn_tail') torn = true;
      else if (item.finding.code !== 'blank_line') findings.push(`${item.finding.code} at line ${item.finding.line}`);
    }
  }
  return { seqs, findings, torn };
}

/** Why `seqs` is not `0, 1, 2, …` (of `expectedLength` records when given). */
export function prefixProblems(seqs: readonly number[], expectedLength?: number): string[] {
  const problems: string[] = [];
  const bad = seqs.findIndex((s, i) => s !== i);
  if (bad >= 0)
    problems.push(
      `records are not a gap-free prefix in append order: position ${bad} holds x_tj_seq ${seqs[bad]} (${truncate(JSON.stringify(seqs), 300)})`,
    );
  if (expectedLength !== undefined && seqs.length !== expectedLength)
    problems.push(`expected ${expectedLength} records, found ${seqs.length}`);
  return problems;
}

/** A pid no process can have on this machine: above `/proc/sys/kernel/pid_max` (Linux), or above the 2^22 limit. */
export function impossiblePid(): number {
  try {
    return Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8').trim()) + 1000;
  } catch (error) {
    // No such file (not Linux) or not readable: the largest pid_max Linux allows is above every pid.
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'EACCES') throw error;
    return 4_194_304 + 1000;
  }
}

/** Writes `<file>.lock` as another writer would (spec §11.4) and returns its text. */
export function plantLock(
  file: string,
  holder: { pid: number; host: string; token: string; boot_id?: string; pid_ns?: string; lease_ms?: number },
): string {
  const text = `${JSON.stringify(holder)}\n`;
  writeFileSync(`${file}.lock`, text);
  return text;
}

/** The text of `<file>.lock`, or null when there is none. */
export function lockText(file: string): string | null {
  try {
    return readFileSync(`${file}.lock`, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    return null;
  }
}
