import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { checkStore } from '@turnjournal/reader';
import { countSetting, type SeededRandom, seededRandom, suiteSeed } from '@turnjournal/test-support';
import { afterAll, expect, it } from 'vitest';
import { AppendFile, encodeRecord, openTurnJournal } from '../support/internals.js';
import { type FixtureProcess, startFixture } from './child.js';
import { contentOf, numberOf, rawRecord, readAll } from './journal.js';
import { readLinesOf } from './space.js';
import { tempDir } from './temp.js';

/** One crash round: what the child writes, how, and when it is killed. */
export interface CrashVariant {
  /** A turn journal through openTurnJournal, or a raw AppendFile of event records. */
  readonly kind: 'turn' | 'raw';
  /** The durability mode of the child's writer. */
  readonly durability: 'every' | 'group';
  /** Appends the child keeps in flight. */
  readonly window: number;
  /** Largest write the child's file system performs per call (0: no limit): small values tear records on a kill. */
  readonly chunk: number;
  /** Padding modulus of the record contents (record sizes vary up to this many bytes). */
  readonly pad: number;
  /** Milliseconds between the child's first acknowledgement and the SIGKILL. */
  readonly killAfterMs: number;
}

/** The rounds of one crash suite, drawn from its seed. */
export interface CrashPlan {
  /** The seed (replay with `TJ_CRASH_SEED=<seed>`). */
  readonly seed: number;
  /** The rounds. */
  readonly rounds: readonly CrashVariant[];
}

/**
 * Draws `TJ_CRASH_ROUNDS` rounds (default `fallbackRounds`) of `kind` from the suite seed and prints both. The seed
 * fixes each round's parameters (mode, window, write size, record sizes, kill delay); where exactly the kill lands
 * also depends on scheduling, so a replay reruns the same rounds, not the same instant.
 */
export function crashPlan(kind: CrashVariant['kind'], fallbackRounds: number): CrashPlan {
  const seed = suiteSeed();
  const count = countSetting('TJ_CRASH_ROUNDS', fallbackRounds);
  const random: SeededRandom = seededRandom(seed);
  const rounds: CrashVariant[] = [];
  for (let i = 0; i < count; i++) {
    const durability = i % 2 === 0 ? 'every' : 'group';
    rounds.push({
      kind,
      durability,
      window: durability === 'group' ? 64 : random.pick([1, 1, 4]),
      chunk: random.pick([0, 5, 16, 64, 700]),
      pad: random.pick([0, 300, 6000]),
      killAfterMs: random.int(0, 60),
    });
  }
  console.log(
    `[durability] ${kind} crash suite: seed=${seed} rounds=${count} (set TJ_CRASH_SEED / TJ_CRASH_ROUNDS to replay or extend)`,
  );
  return { seed, rounds };
}

function contentOfRecord(kind: CrashVariant['kind'], value: Record<string, unknown>): unknown {
  if (kind === 'turn') return value.content;
  return (value.payload as { message?: { content?: unknown } } | undefined)?.message?.content;
}

function range(count: number): number[] {
  return Array.from({ length: count }, (_, i) => i);
}

/** What one crash round saw (summarised per suite, so a run shows that the kills really tore records). */
export interface CrashOutcome {
  /** Records acknowledged by the child. */
  readonly acked: number;
  /** Records that survived the kill. */
  readonly survivors: number;
  /** Torn bytes left after the last LF. */
  readonly tornBytes: number;
}

/** One line summarising a suite's outcomes. */
export function summarise(outcomes: readonly CrashOutcome[]): string {
  const torn = outcomes.filter((outcome) => outcome.tornBytes > 0).length;
  const unacked = outcomes.reduce((sum, outcome) => sum + (outcome.survivors - outcome.acked), 0);
  const acked = outcomes.reduce((sum, outcome) => sum + outcome.acked, 0);
  return `${outcomes.length} rounds, ${acked} acknowledged records, ${unacked} unacknowledged survivors, ${torn} torn tails repaired`;
}

/** A crash round whose child process is started and waits for `go` (so its start-up overlaps other work). */
export interface PreparedCrash {
  /** The round. */
  readonly variant: CrashVariant;
  /** The waiting child. */
  readonly child: FixtureProcess;
  /** The store root (a new temporary directory). */
  readonly root: string;
  /** The directory of the journal. */
  readonly dir: string;
  /** The journal file. */
  readonly file: string;
  /** The session id. */
  readonly sessionId: string;
}

/** Creates the round's directory and starts its child, which waits for `go` before it opens the journal. */
export function prepareCrash(variant: CrashVariant): PreparedCrash {
  const root = tempDir('tj-crash-');
  const sessionId = 's1';
  const dir = variant.kind === 'turn' ? join(root, '_turn_journal') : join(root, sessionId);
  const file = join(dir, variant.kind === 'turn' ? `${sessionId}.jsonl` : 'events.jsonl');
  if (variant.kind === 'raw') mkdirSync(dir);
  const child = startFixture({
    op: 'append',
    kind: variant.kind,
    durability: variant.durability,
    dir,
    sessionId,
    path: file,
    window: variant.window,
    chunk: variant.chunk,
    pad: variant.pad,
    waitGo: true,
  });
  return { variant, child, root, dir, file, sessionId };
}

/**
 * One round of the SIGKILL crash test (spec §11): a child process appends as fast as it can and reports each
 * acknowledged record; it is killed at a random moment; then the file must hold every acknowledged record exactly
 * once and in order, the survivors must be a gap-free prefix of the attempted records plus at most a torn tail, and a
 * new writer must take the dead child's lock over, repair the torn tail into its quarantine file and append cleanly.
 *
 * SIGKILL ends the process but not the kernel: data written to the page cache survives it even without fsync. This
 * therefore tests process crashes (a writer killed mid-append, a torn line, a stale lock), not power loss, which the
 * simulated file system of the conformance kit covers.
 */
export async function crashRound(prepared: PreparedCrash, context: string): Promise<CrashOutcome> {
  const { variant, child, root, dir, file, sessionId } = prepared;
  const where = `${context} variant=${JSON.stringify(variant)} file=${file}`;
  await child.waitForLine((line) => line === 'waiting', 'waiting');
  child.send('go');
  await child.waitForLine((line) => line.startsWith('ready '), 'ready');
  await child.waitForLine((line) => line.startsWith('a '), 'a first acknowledgement');
  if (variant.killAfterMs > 0) await sleep(variant.killAfterMs);
  child.kill();
  const exit = await child.closed;
  expect(exit.signal, `${where}: the child should die of SIGKILL; stderr ${child.stderr()}`).toBe('SIGKILL');

  let issued = -1;
  const acked: number[] = [];
  for (const line of child.lines) {
    if (line.startsWith('i ')) issued = Math.max(issued, Number(line.slice(2)));
    else if (line.startsWith('a ')) acked.push(Number(line.slice(2)));
    else if (line.startsWith('e ')) throw new Error(`${where}: an append failed in the child: ${line}`);
  }
  expect(acked.length, `${where}: the child acknowledged records`).toBeGreaterThan(0);
  expect(JSON.parse(readFileSync(`${file}.lock`, 'utf8')).pid, `${where}: the dead child's lock is left`).toBe(
    child.pid,
  );

  // What survived: read with the reference reader.
  // A writer pre-allocates space after its lines (spec §3.8): the NUL bytes that end the file are that space, the
  // torn tail is what lies between the last LF and them.
  const lines = readLinesOf(file);
  const committedEnd = lines.lastIndexOf(0x0a) + 1;
  const torn = lines.subarray(committedEnd);
  const crashed = await readAll(file);
  const numbers = crashed.records.map((record) => numberOf(contentOfRecord(variant.kind, record.value)));
  const survivors = numbers.length;
  expect(numbers, `${where}: survivors must be the gap-free prefix 0..k-1 of the attempted records, each once`).toEqual(
    range(survivors),
  );
  expect(survivors - 1, `${where}: nothing survives that was never attempted`).toBeLessThanOrEqual(issued);
  const lost = acked.filter((n) => n >= survivors);
  expect(lost, `${where}: acknowledged records missing after the crash (TJ-DUR-024)`).toEqual([]);
  const inOrder = [...acked].sort((a, b) => a - b);
  expect(acked, `${where}: acknowledgements come in call order`).toEqual(inOrder);
  expect(
    crashed.findings.map((finding) => [finding.code, finding.offset, finding.length]),
    `${where}: the only finding allowed after a crash is one torn tail at the end`,
  ).toEqual(torn.length === 0 ? [] : [['torn_tail', committedEnd, torn.length]]);
  if (variant.kind === 'raw') {
    crashed.records.forEach((record, n) => {
      expect(record.value, `${where}: record ${n} is altered`).toEqual(rawRecord(n, variant.pad));
    });
    const nextLine = encodeRecord(rawRecord(survivors, variant.pad));
    expect(
      Buffer.from(torn).equals(Buffer.from(nextLine.subarray(0, torn.length))) && torn.length < nextLine.length,
      `${where}: the torn tail must be a strict prefix of the next attempted record's line`,
    ).toBe(true);
  }

  // A new writer: takes over the dead child's lock, repairs the torn tail, appends cleanly.
  const more = 3;
  let opened: AppendFile['opened'];
  if (variant.kind === 'turn') {
    const journal = await openTurnJournal({ dir, sessionId, durability: variant.durability });
    opened = journal.opened;
    expect(journal.findings, `${where}: the reopened turn journal finds no damage`).toEqual([]);
    expect(journal.pendingTurns().length, `${where}: the new writer knows every surviving turn`).toBe(survivors);
    for (let n = survivors; n < survivors + more; n++) await journal.submit({ content: contentOf(n, variant.pad) });
    await journal.close();
  } else {
    const writer = await AppendFile.open(file, { durability: variant.durability });
    opened = writer.opened;
    for (let n = survivors; n < survivors + more; n++) await writer.appendRecord(rawRecord(n, variant.pad));
    await writer.close();
  }
  expect(opened.created, `${where}: the file existed`).toBe(false);
  expect(opened.tookOverLock, `${where}: the dead child's lock must be taken over (TJ-DUR-019)`).toBe(true);
  if (torn.length === 0) expect(opened.tornTail, `${where}: no torn tail to repair`).toBeNull();
  else {
    const quarantine = `${file}.${committedEnd}.torn`;
    expect(opened.tornTail, `${where}: the torn tail is repaired (TJ-DUR-005)`).toEqual({
      length: torn.length,
      quarantine,
    });
    expect(
      Buffer.from(readFileSync(quarantine)).equals(Buffer.from(torn)),
      `${where}: the quarantine file holds exactly the torn bytes`,
    ).toBe(true);
  }

  const after = await readAll(file);
  expect(
    after.records.map((record) => numberOf(contentOfRecord(variant.kind, record.value))),
    `${where}: after the repair and new appends the file is the survivors plus the new records`,
  ).toEqual(range(survivors + more));
  expect(after.findings, `${where}: no finding after repair`).toEqual([]);
  const closed = readFileSync(file);
  expect(closed.at(-1), `${where}: the closed file ends with its last line, its space truncated (TJ-DUR-034)`).toBe(
    0x0a,
  );
  expect(existsSync(`${file}.lock`), `${where}: the new writer released its lock`).toBe(false);
  const check = await checkStore([root]);
  expect(
    check.findings.filter((finding) => finding.severity === 'error'),
    `${where}: checkStore reports no error`,
  ).toEqual([]);
  if (variant.kind === 'turn')
    expect(check.sessions[0]?.turns.length, `${where}: checkStore derives every turn`).toBe(survivors + more);
  else expect(check.eventLogs[0]?.lastSeq, `${where}: checkStore sees the last seq`).toBe(survivors + more);
  return { acked: acked.length, survivors, tornBytes: torn.length };
}

/**
 * Defines the rounds of a crash suite as tests, one per round, under the current `describe`. Each round's child is
 * started while the round before it runs (it waits for `go`), which hides most of the Node.js start-up.
 */
export function defineCrashRounds(kind: CrashVariant['kind'], fallbackRounds: number, testName: string): void {
  const plan = crashPlan(kind, fallbackRounds);
  const outcomes: CrashOutcome[] = [];
  let next: PreparedCrash | undefined;
  afterAll(() => {
    next?.child.kill();
    console.log(`[durability] ${kind} crash suite (seed=${plan.seed}): ${summarise(outcomes)}`);
  });
  plan.rounds.forEach((variant, round) => {
    const name = `round ${round}: ${variant.durability}, window ${variant.window}, chunk ${variant.chunk}: ${testName}`;
    it(name, { timeout: 60_000 }, async () => {
      const current = next ?? prepareCrash(variant);
      const following = plan.rounds[round + 1];
      next = following === undefined ? undefined : prepareCrash(following);
      const context = `seed=${plan.seed} round=${round} (replay: TJ_CRASH_SEED=${plan.seed})`;
      try {
        outcomes.push(await crashRound(current, context));
      } catch (error) {
        // Every failure names the seed, including a child that never answered.
        if (error instanceof Error && !error.message.includes(context)) error.message = `${context}: ${error.message}`;
        throw error;
      }
    });
  });
}
