import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { AdapterFailure, type AdapterProcess, truncate } from '../../process.js';
import { Random } from '../../random.js';
import { straceAvailable } from '../../strace.js';
import { freshDir } from '../fresh-dir.js';
import { answerCode, spawnAdapter, started, type WriterContext } from './context.js';
import {
  faultWrapper,
  faultyPath,
  type InjectedFault,
  SYNC_EIO,
  SYNC_EIO_ONCE,
  WRITE_ENOSPC,
} from './injected-fault.js';
import { catchProbability, roundsToCatch } from './race.js';
import { heldBytes } from './store-lines.js';
import { claimsFeature } from './support.js';

// `writer/histories`: generated operation histories from generated starting states. A writer that is right on a
// fresh file and wrong on a log compaction cut, on a torn or pre-allocated end, or after a kill in the middle of a
// batch, is right in every hand-picked check that starts fresh; here every history starts from one of those states
// and mixes pipelined appends, kills (SIGKILL), closes, reopens, clean restarts, refused records and — with feature
// lifecycle — the writer's own event appends, then compares what the journal holds with what was acknowledged.

type Json = Record<string, unknown>;
type Family = 'turn' | 'event';
/** Where a history starts. */
type Start = 'fresh' | 'torn' | 'preallocated' | 'compacted' | 'extension';

/** A defect that shows in this share of the histories (one starting state of five)… */
const DEFECT_SHARE = 0.2;
/** …is caught by the default run with at least this probability (TJ-CONF-054). */
const CATCH_PROBABILITY = 0.99;
/** Histories run at once. */
const CONCURRENT_HISTORIES = 3;
/** The histories of the default run (`--runs` 20): 21. */
export const DEFAULT_HISTORIES = roundsToCatch(CATCH_PROBABILITY, DEFECT_SHARE);

/**
 * The histories a run with `rounds` writer rounds (`--runs`, 20 by default) generates over `states` starting states:
 * {@link DEFAULT_HISTORIES} scaled by `rounds` / 20, and at least one per starting state; none without rounds.
 */
export function historyCount(rounds: number, states: number): number {
  return rounds === 0 ? 0 : Math.max(states, Math.ceil((DEFAULT_HISTORIES * rounds) / 20));
}

/**
 * The starting states, interleaved so that the first histories of a small run already cover the one a seq counted
 * from records fails on (an event log compaction cut at a checkpoint with seq N) and both families.
 */
const STRATA: readonly { family: Family; start: Start }[] = [
  { family: 'event', start: 'compacted' },
  { family: 'turn', start: 'fresh' },
  { family: 'event', start: 'extension' },
  { family: 'turn', start: 'torn' },
  { family: 'event', start: 'fresh' },
  { family: 'turn', start: 'extension' },
  { family: 'event', start: 'torn' },
  { family: 'turn', start: 'preallocated' },
  { family: 'event', start: 'preallocated' },
];

const TS = '2026-06-19T03:14:07Z';
const CREATED_AT = 1_770_000_000;

/** The records a history starts from (before any torn or pre-allocated end), and the bytes that end the file. */
function startingState(family: Family, start: Start, random: Random): { records: Json[]; end: Buffer } {
  const event = (seq: number, type: string, payload: Json): Json => ({ seq, ts: TS, type, payload });
  const turn = (turnId: string, extra: Json = {}): Json => ({
    version: 1,
    event: 'submitted',
    turn_id: turnId,
    session_id: 's1',
    created_at: CREATED_AT,
    role: 'user',
    content: `before ${turnId}`,
    ...extra,
  });
  const message = (seq: number) => event(seq, 'message_append', { message: { role: 'user', content: `m${seq}` } });
  let records: Json[];
  if (start === 'fresh') records = [];
  else if (start === 'compacted') {
    // As compaction leaves a log (spec §14.2): a checkpoint with seq N first, the seqs below it gone.
    const n = random.int(1_000, 1_000_000);
    records = [
      event(n, 'checkpoint', { messages: [{ role: 'user', content: 'before compaction' }], runs: [] }),
      message(n + 1),
    ];
  } else if (start === 'extension')
    records =
      family === 'event'
        ? [message(0), event(1, 'x.acme.note', { text: 'an extension record' }), message(2)]
        : [turn('s0'), { ...turn('s0'), event: 'x.acme.note', content: undefined, role: undefined }, turn('s1')];
  else records = family === 'event' ? [message(0), message(1)] : [turn('s0'), turn('s1')];
  const end =
    start === 'torn'
      ? Buffer.from(family === 'event' ? '{"seq":2,"ts":"2026-06-19T03:1' : '{"version":1,"event":"completed","tu')
      : start === 'preallocated'
        ? Buffer.alloc(4096)
        : Buffer.alloc(0);
  return { records: records.map((r) => JSON.parse(JSON.stringify(r)) as Json), end };
}

/**
 * A fault a history may meet once (injected as the fault checks inject them, injected-fault.ts): the harness renames
 * the journal to `<file>.fault` for two pipelined appends. A failed sync poisons the writer (TJ-DUR-021), a one-shot one
 * too although a retry would succeed; a failed write cancels what is queued behind it (TJ-DUR-030).
 */
interface HistoryFault extends InjectedFault {
  readonly name: string;
}

const FAULTS: readonly HistoryFault[] = [
  { name: 'fdatasync EIO once', ...SYNC_EIO_ONCE },
  { name: 'fdatasync EIO', ...SYNC_EIO },
  { name: 'write ENOSPC', ...WRITE_ENOSPC },
];

/** One step of a history. */
type Step =
  | { readonly kind: 'batch'; readonly count: number; readonly killAfter: number | null }
  | { readonly kind: 'reopen' }
  | { readonly kind: 'restart' }
  | { readonly kind: 'invalid' }
  | { readonly kind: 'event-append' }
  | { readonly kind: 'fault'; readonly fault: HistoryFault };

function describeStep(step: Step): string {
  if (step.kind === 'batch')
    return `${step.count} appends${step.killAfter === null ? '' : `, SIGKILL after ${step.killAfter} acks`}`;
  if (step.kind === 'fault') return `fault ${step.fault.name} for 2 appends`;
  return step.kind;
}

/**
 * The steps of a history: three to six, with an event append of the writer's own where the claim allows one, and in
 * about two histories in five one fault where faults can be injected.
 */
function generateSteps(random: Random, eventAppends: boolean, faults: boolean): Step[] {
  const steps: Step[] = [];
  const length = random.int(3, 6);
  for (let i = 0; i < length; i++) {
    const roll = random.next();
    if (roll < 0.5) {
      const count = random.int(1, 12);
      steps.push({ kind: 'batch', count, killAfter: random.chance(0.35) ? random.int(0, count) : null });
    } else if (roll < 0.68) steps.push({ kind: 'reopen' });
    // A clean restart costs a process start, as a kill does; kills show more, so restarts are fewer.
    else if (roll < 0.74) steps.push({ kind: 'restart' });
    else if (roll < 0.86 || !eventAppends) steps.push({ kind: 'invalid' });
    else steps.push({ kind: 'event-append' });
  }
  if (eventAppends && !steps.some((s) => s.kind === 'event-append'))
    steps.splice(random.int(0, steps.length), 0, { kind: 'event-append' });
  if (faults && random.chance(0.4))
    steps.splice(random.int(0, steps.length), 0, { kind: 'fault', fault: random.pick(FAULTS) });
  return steps;
}

/** The committed lines of `bytes` (everything up to its last LF) and whatever follows them. */
function committed(bytes: Buffer): { lines: Buffer; tail: Buffer } {
  const end = bytes.lastIndexOf(0x0a) + 1;
  return { lines: bytes.subarray(0, end), tail: bytes.subarray(end) };
}

/** The last `seq` of an event record among committed lines; -1 when there is none. */
function lastSeq(lines: Buffer): number {
  const text = lines.toString('utf8').split('\n');
  for (let i = text.length - 1; i >= 0; i--) {
    try {
      const seq = (JSON.parse(text[i] as string) as { seq?: unknown }).seq;
      if (typeof seq === 'number') return seq;
    } catch {
      // Not a record (an empty last piece, damage): the one before it may be.
    }
  }
  return -1;
}

/** What a history sent, for the oracle. */
interface Sent {
  /** `x_tj_seq` → the batch it was sent in; acknowledged ones are in `acked`. */
  readonly batchOf: Map<number, number>;
  readonly acked: Set<number>;
  /** `x_tj_seq` of records refused after a failed sync: their bytes may be in the journal, or not (TJ-DUR-021). */
  readonly unknown: Set<number>;
  /** `x_tj_seq` of records that must have been refused and must not be held. */
  readonly refused: Set<number>;
  /** The seq and type of each record the writer appended itself (`event_append`) and acknowledged. */
  readonly ownRecords: { seq: number; type: string }[];
}

/** Runs one history; returns its failures (each prefixed by `label`). */
async function runHistory(
  context: WriterContext,
  faults: boolean,
  family: Family,
  start: Start,
  historySeed: number,
  label: string,
): Promise<string[]> {
  const random = new Random(historySeed);
  const failures: string[] = [];
  const fail = (what: string) => failures.push(`${label}: ${what}`);
  const dir = freshDir('tj-conf-history-');
  const file = family === 'turn' ? join(dir, '_turn_journal', 's1.jsonl') : join(dir, 's1', 'events.jsonl');
  mkdirSync(dirname(file), { recursive: true });
  const eventAppends = family === 'event' && claimsFeature(context.claims, 'lifecycle');
  const steps = generateSteps(random, eventAppends, faults);
  const fault = steps.find((s): s is Extract<Step, { kind: 'fault' }> => s.kind === 'fault')?.fault;
  // Every process of a history with a fault runs under strace: the fault hits only while the journal is renamed.
  const wrapper = fault === undefined ? undefined : faultWrapper(file, fault);
  const script = `${label}: ${steps.map(describeStep).join('; ')}`;
  // The adapter process and open handle of the moment (none after a kill or a restart); an object, so that the
  // helpers below and the steps see one state.
  const now: { process: AdapterProcess | null; handle: string | null } = { process: null, handle: null };
  const sent: Sent = { batchOf: new Map(), acked: new Set(), unknown: new Set(), refused: new Set(), ownRecords: [] };
  let nextId = 0;
  const durability = (): string => random.pick(context.modes);
  const live = async (): Promise<AdapterProcess> => {
    now.process ??= await started(spawnAdapter(context, wrapper));
    return now.process;
  };
  const opened = async (): Promise<{ process: AdapterProcess; handle: string }> => {
    const adapter = await live();
    now.handle ??= ((await adapter.request('open', { file, durability: durability() })) as { handle: string }).handle;
    return { process: adapter, handle: now.handle };
  };
  const closeHandle = async () => {
    if (now.process !== null && now.handle !== null) await now.process.request('close', { handle: now.handle });
    now.handle = null;
  };
  const held = async () => committed(await heldBytes(context, file, now.process ?? undefined)).lines;
  const record = (id: number, seq: number): Json =>
    family === 'turn'
      ? {
          version: 1,
          event: 'submitted',
          turn_id: `h${String(id).padStart(4, '0')}`,
          session_id: 's1',
          created_at: CREATED_AT + id,
          role: 'user',
          content: `history record ${id} ${'x'.repeat(random.int(0, 200))}`,
          x_tj_seq: id,
        }
      : {
          seq,
          ts: TS,
          type: 'message_append',
          payload: { message: { role: 'user', content: `history record ${id} ${'x'.repeat(random.int(0, 200))}` } },
          x_tj_seq: id,
        };
  try {
    // The starting state: written as a file, or — for a store that is not files — appended through the adapter.
    const state = startingState(family, start, random);
    if (context.storeLines) {
      const { process: seeding, handle: seeded } = await opened();
      for (const r of state.records) await seeding.request('append', { handle: seeded, record: r });
      await closeHandle();
    } else
      writeFileSync(
        file,
        Buffer.concat([Buffer.from(state.records.map((r) => `${JSON.stringify(r)}\n`).join('')), state.end]),
      );
    const startLines = await held();

    for (const [index, step] of steps.entries()) {
      if (step.kind === 'batch') {
        // Opened first: with store-lines, `held` then asks this process, not a new one.
        const { process: adapter, handle: h } = await opened();
        const first = lastSeq(await held()) + 1;
        const ids = Array.from({ length: step.count }, () => nextId++);
        for (const id of ids) sent.batchOf.set(id, index);
        if (step.killAfter === 0) void adapter.kill();
        const errors: string[] = [];
        let ackedHere = 0;
        await Promise.all(
          ids.map((id, i) =>
            adapter.request('append', { handle: h, record: record(id, first + i) }).then(
              () => {
                sent.acked.add(id);
                ackedHere += 1;
                if (ackedHere === step.killAfter) void adapter.kill();
              },
              (error: unknown) => {
                if (!(error instanceof AdapterFailure && error.kind === 'exited' && step.killAfter !== null))
                  errors.push(error instanceof Error ? error.message : String(error));
              },
            ),
          ),
        );
        for (const e of errors.slice(0, 2)) fail(`step ${index} (${describeStep(step)}): an append failed: ${e}`);
        if (step.killAfter !== null) {
          await adapter.kill();
          await adapter.dispose();
          now.process = null;
          now.handle = null;
        }
      } else if (step.kind === 'reopen') {
        await closeHandle();
        await opened();
      } else if (step.kind === 'restart') {
        await closeHandle();
        if (now.process !== null) {
          const code = await now.process.stop();
          if (code !== 0) fail(`step ${index} (restart): the adapter exited with ${code} after stop`);
          now.process = null;
        }
      } else if (step.kind === 'invalid') {
        const { process: adapter, handle: h } = await opened();
        const id = nextId++;
        sent.refused.add(id);
        // No `turn_id` (turn) or a negative `seq` (event): a record the v1 schema rejects (TJ-COMPAT-018).
        const bad = {
          ...record(id, lastSeq(await held()) + 1),
          ...(family === 'turn' ? { turn_id: '' } : { seq: -1 }),
        };
        const code = await answerCode(adapter.request('append', { handle: h, record: bad }));
        if (code !== 'bad_request') fail(`step ${index} (invalid record): answered ${code}, not bad_request`);
      } else if (step.kind === 'fault') {
        // Opened first: with store-lines, `held` then asks this process, not a new one.
        const { process: adapter, handle: h } = await opened();
        const first = lastSeq(await held()) + 1;
        const ids = [nextId++, nextId++];
        for (const id of ids) sent.batchOf.set(id, index);
        const what = `step ${index} (${describeStep(step)})`;
        renameSync(file, faultyPath(file));
        let codes: string[];
        try {
          codes = await Promise.all(
            ids.map((id, i) => answerCode(adapter.request('append', { handle: h, record: record(id, first + i) }))),
          );
        } finally {
          renameSync(faultyPath(file), file);
        }
        for (const [i, code] of codes.entries()) {
          const id = ids[i] as number;
          if (code === 'ok') {
            sent.acked.add(id);
            fail(`${what}: the ${i === 0 ? 'failing append' : 'append queued behind it'} was acknowledged`);
          } else if (step.fault.poisons) sent.unknown.add(id);
          else sent.refused.add(id);
        }
        if (step.fault.poisons) {
          // Syncs work again: the writer must still refuse, until it is opened again (TJ-DUR-021).
          const id = nextId++;
          sent.refused.add(id);
          const later = await answerCode(adapter.request('append', { handle: h, record: record(id, first + 2) }));
          if (later === 'ok') fail(`${what}: an append after the failed sync was acknowledged`);
          // The process is dropped, as a server would restart after such a failure.
          await adapter.dispose();
          now.process = null;
          now.handle = null;
        }
      } else {
        // The writer's own event append: the lifecycle writer opens the log itself, so the harness's handle closes.
        await closeHandle();
        const adapter = await live();
        const expected = lastSeq(await held()) + 1;
        const payload = { message: { role: 'user', content: `own ${index}` } };
        const answer = (await adapter.request('event_append', { file, type: 'message_append', payload })) as {
          seq: number;
        };
        if (answer.seq !== expected)
          fail(
            `step ${index} (event_append): given seq ${answer.seq}, not ${expected} (the last record's seq + 1, TJ-EVENT-003/004)`,
          );
        sent.ownRecords.push({ seq: answer.seq, type: 'message_append' });
      }
    }
    // The end: a writer opens and closes the journal once more, as the next one would (repairing what a kill left).
    await closeHandle();
    await opened();
    await closeHandle();
    const final = await heldBytes(context, file, now.process ?? undefined);
    failures.push(...judge(final, startLines, sent, family, eventAppends).map((p) => `${label}: ${p}`));
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error));
  } finally {
    if (now.process !== null) await now.process.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
  if (failures.length > 0) failures.push(`steps of ${script}`);
  return failures;
}

/**
 * What is wrong with the journal at the end of a history: the starting lines not kept byte for byte, an acknowledged
 * record missing or held twice, records out of the order they were sent in, a refused record held, a line that is not
 * a whole record (half of an unacknowledged one), a line nobody wrote, a torn end after the last open and close.
 */
function judge(final: Buffer, start: Buffer, sent: Sent, family: Family, eventAppends: boolean): string[] {
  const problems: string[] = [];
  const { lines, tail } = committed(final);
  if (tail.length > 0)
    problems.push(`the journal ends in ${tail.length} byte(s) after its last line after a clean close`);
  if (!lines.subarray(0, start.length).equals(start)) {
    problems.push(
      `the starting lines are not kept byte for byte: expected ${truncate(JSON.stringify(start.toString('latin1')), 200)}, got ${truncate(JSON.stringify(lines.subarray(0, start.length).toString('latin1')), 200)}`,
    );
    return problems;
  }
  const seen: number[] = [];
  const own = new Set(sent.ownRecords.map((r) => `${r.seq} ${r.type}`));
  const ownSeen = new Set<string>();
  const text = lines.subarray(start.length).toString('utf8').split('\n').slice(0, -1);
  for (const [i, line] of text.entries()) {
    let value: Json;
    try {
      value = JSON.parse(line) as Json;
    } catch {
      problems.push(`line ${i + 1} after the start is not a whole JSON record: ${truncate(JSON.stringify(line), 120)}`);
      continue;
    }
    const id = value.x_tj_seq;
    if (typeof id === 'number') {
      seen.push(id);
      continue;
    }
    const key = `${value.seq} ${value.type}`;
    if (own.has(key)) ownSeen.add(key);
    // A writer's own checkpoint (TJ-EVENT-006) may follow its own appends.
    else if (!(family === 'event' && eventAppends && value.type === 'checkpoint'))
      problems.push(`line ${i + 1} after the start is no record the history wrote: ${truncate(line, 120)}`);
  }
  const counts = new Map<number, number>();
  for (const id of seen) counts.set(id, (counts.get(id) ?? 0) + 1);
  const twice = [...counts].filter(([, n]) => n > 1).map(([id]) => id);
  if (twice.length > 0) problems.push(`records held more than once: x_tj_seq ${JSON.stringify(twice)}`);
  const lost = [...sent.acked].filter((id) => !counts.has(id));
  if (lost.length > 0) problems.push(`acknowledged records lost: x_tj_seq ${truncate(JSON.stringify(lost), 200)}`);
  const refused = seen.filter((id) => sent.refused.has(id));
  if (refused.length > 0) problems.push(`refused records held: x_tj_seq ${JSON.stringify(refused)}`);
  const unknown = seen.filter((id) => !sent.batchOf.has(id) && !sent.refused.has(id) && !sent.unknown.has(id));
  if (unknown.length > 0) problems.push(`records never sent held: x_tj_seq ${JSON.stringify(unknown)}`);
  const outOfOrder = seen.findIndex((id, i) => i > 0 && id < (seen[i - 1] as number));
  if (outOfOrder >= 0)
    problems.push(`records out of the order they were sent in: ${truncate(JSON.stringify(seen), 200)}`);
  // Within a batch the writer writes in order (TJ-DUR-006): what it holds of a killed batch is a prefix of it.
  const batches = new Map<number, number[]>();
  for (const [id, batch] of sent.batchOf) batches.set(batch, [...(batches.get(batch) ?? []), id]);
  for (const [batch, ids] of batches) {
    const kept = ids.filter((id) => counts.has(id));
    if (kept.some((id, i) => id !== ids[i]))
      problems.push(
        `step ${batch}: the records held of the batch are not a gap-free prefix of it: ${JSON.stringify(kept)} of ${JSON.stringify(ids)}`,
      );
  }
  for (const key of own)
    if (!ownSeen.has(key)) problems.push(`the record the writer appended with seq and type ${key} is not held`);
  return problems;
}

/**
 * `writer/histories` (TJ-CONF-054): generated operation histories from generated starting states — fresh, torn tail,
 * an event log compaction cut at a checkpoint with seq N, pre-allocated NUL space, extension records — with kill
 * points, closes, reopens, clean restarts, refused records and (feature lifecycle, event family) the writer's own
 * appends; after each, what the journal holds must be the starting lines and then the acknowledged records, in order,
 * each once, and nothing half-written. `--runs` scales the number of histories (21 at the default 20).
 */
export async function historiesCheck(context: WriterContext): Promise<void> {
  const { claims, seed, rounds, recorder } = context;
  const families = claims.families.filter((f): f is Family => f === 'turn' || f === 'event');
  // A store that is not files has no torn or pre-allocated end (adapter.md §5.8).
  const strata = STRATA.filter(
    (s) => families.includes(s.family) && !(context.storeLines && (s.start === 'torn' || s.start === 'preallocated')),
  );
  const histories = historyCount(rounds, strata.length);
  // Faults need strace and the `every` mode, as the fault checks; a store that is not files has no file to fault.
  const faults =
    !context.storeLines && context.strace !== 'never' && claims.durability.includes('every') && straceAvailable();
  const percent = (p: number) => `${Math.floor(p * 1000) / 10} %`;
  await recorder.record(
    'writer/histories',
    `generated histories of appends, kills, closes and reopens${faults ? ', one-shot and persistent faults' : ''} from ${strata.length} starting states keep every acknowledged record once, in order, after the starting lines (${histories} histories, seed ${seed}: a defect shown by one history in ${Math.round(1 / DEFECT_SHARE)} is caught with probability ${percent(catchProbability(histories, DEFECT_SHARE))})`,
    'writer',
    [
      'TJ-CONF-009',
      'TJ-CONF-054',
      'TJ-COMPAT-018',
      'TJ-DUR-004',
      'TJ-DUR-005',
      'TJ-DUR-006',
      'TJ-DUR-024',
      'TJ-DUR-033',
      'TJ-EVENT-003',
      'TJ-EVENT-004',
      'TJ-STORE-002',
      'TJ-STORE-003',
      'TJ-STORE-004',
      // Only when faults are injected (strace): a run without them shows nothing of these.
      ...(faults ? ['TJ-DUR-021', 'TJ-DUR-030'] : []),
    ],
    async () => {
      if (histories === 0) return { skip: 'no rounds (--runs 0): not proven', unproven: true };
      // Histories run a few at a time, each in its own directory with its own processes: most of a history's time is
      // waiting for process starts, syncs and kills, not the CPU. Failures are reported in history order.
      const results: string[][] = [];
      let next = 0;
      const worker = async () => {
        while (next < histories) {
          const i = next++;
          const { family, start } = strata[i % strata.length] as (typeof strata)[number];
          const historySeed = (seed ^ 0x2545f491) + i * 7919;
          const label = `history ${i} (seed ${historySeed}, ${family} from ${start})`;
          results[i] = await runHistory(context, faults, family, start, historySeed, label);
        }
      };
      await Promise.all(Array.from({ length: Math.min(CONCURRENT_HISTORIES, histories) }, worker));
      return { failures: results.flat().slice(0, 40), situations: histories };
    },
  );
}
