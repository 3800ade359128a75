// Model-based test (fc.commands) of the reference turn journal writer on the simulated file system, against a model
// of the spec §10 state machine: submit (new, retried, conflicting), the lifecycle steps (legal and illegal), crash
// (power loss with an operation in flight, then reopen with lock take-over), reopen, startup recovery and retention
// compaction. After every crash the acknowledgement oracle runs (TJ-CONF-009, TJ-DUR-024): every acknowledged record
// survives, the file's records are a gap-free prefix of the appended ones with nothing twice, and the reference
// reader derives exactly the model's states.
import { join } from 'node:path';
import { checkStore } from '@turnjournal/reader';
import {
  JOURNAL_ONLY_HOOKS,
  openTurnJournal,
  recoverStore,
  sweepTurnJournals,
  type TurnJournal,
} from '@turnjournal/writer';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SimulatedCrashError, SimulatedFileSystem, seededRandom } from '../../src/simulated-fs/index.js';
import { DEAD_HOLDERS, realTempDir, removeLocks, splitCommitted } from './sim-support.js';
import { checkProperty } from './support.js';

const ROOT = '/store';
const DIR = `${ROOT}/_turn_journal`;
const SESSION = 's1';
const FILE = `${DIR}/${SESSION}.jsonl`;
const EPOCH_MS = 1_778_458_282_123;

type Step = 'worker_started' | 'assistant_started' | 'completed' | 'interrupted';
type State = 'submitted' | Step;
const RANK: Record<State, number> = {
  submitted: 0,
  worker_started: 1,
  assistant_started: 2,
  completed: 3,
  interrupted: 3,
};
const terminal = (state: State) => RANK[state] === 3;

/** One line of the journal as the model knows it. */
interface Line {
  readonly turnId: string;
  readonly event: string;
}

interface Model {
  turns: Map<string, { content: string; state: State }>;
  /** The journal's records in file order (the durable file after the last check). */
  lines: Line[];
  /** Turns a compaction removed; their ids stay retired (TJ-DERIVE-006). */
  retired: Set<string>;
}

interface Real {
  readonly sim: SimulatedFileSystem;
  journal: TurnJournal | undefined;
  clock: number;
  readonly log: string[];
}

type Operation = { kind: 'submit'; turnId: string; content: string } | { kind: 'step'; turnId: string; step: Step };

function describeOp(op: Operation): string {
  return op.kind === 'submit' ? `submit(${op.turnId}, ${JSON.stringify(op.content)})` : `${op.step}(${op.turnId})`;
}

/** What the model says an operation does: the error code it must fail with, or the record it appends. */
function predict(model: Model, op: Operation): { error: string } | { line: Line; state: State; created?: boolean } {
  const known = model.turns.get(op.turnId);
  if (op.kind === 'submit') {
    // A pruned id names no new turn: every reader would drop its records (TJ-DERIVE-006).
    if (model.retired.has(op.turnId)) return { error: 'turn_id_conflict' };
    if (known === undefined)
      return { line: { turnId: op.turnId, event: 'submitted' }, state: 'submitted', created: true };
    return known.content === op.content ? { error: '' } : { error: 'turn_id_conflict' };
  }
  if (known === undefined) return { error: 'unknown_turn' };
  if (terminal(known.state)) return { error: 'illegal_transition' };
  if (!terminal(op.step) && RANK[op.step] <= RANK[known.state]) return { error: 'illegal_transition' };
  return { line: { turnId: op.turnId, event: op.step }, state: op.step };
}

function apply(model: Model, op: Operation, line: Line, state: State): void {
  model.lines.push(line);
  if (op.kind === 'submit') model.turns.set(op.turnId, { content: op.content, state });
  else (model.turns.get(op.turnId) as { state: State }).state = state;
}

function call(journal: TurnJournal, op: Operation): Promise<unknown> {
  if (op.kind === 'submit') return journal.submit({ turnId: op.turnId, content: op.content });
  switch (op.step) {
    case 'worker_started':
      return journal.workerStarted(op.turnId);
    case 'assistant_started':
      return journal.assistantStarted(op.turnId, { assistantMessageIndex: 1 });
    case 'completed':
      return journal.complete(op.turnId, { assistantMessageIndex: 1 });
    case 'interrupted':
      return journal.interrupt(op.turnId, 'cancelled');
  }
}

async function open(real: Real): Promise<TurnJournal> {
  real.journal = await openTurnJournal({
    dir: DIR,
    sessionId: SESSION,
    fs: real.sim.view(),
    lock: DEAD_HOLDERS,
    clock: () => (real.clock += 1000),
  });
  return real.journal;
}

/** The records of the journal file now (committed lines only) as (turn, event) pairs. */
function fileLines(real: Real): { lines: Line[]; raw: string[] } {
  const bytes = real.sim.peek(FILE) ?? new Uint8Array(0);
  const { lines } = splitCommitted(bytes);
  return {
    raw: lines,
    lines: lines.map((text) => {
      const value = JSON.parse(text) as { turn_id?: string; event: string };
      return { turnId: value.turn_id ?? '', event: value.event };
    }),
  };
}

/** The reference reader's view of the store now: derived states and finding codes. */
async function derive(real: Real): Promise<{ states: Record<string, string>; codes: string[] }> {
  const tmp = realTempDir('tj-model-');
  try {
    real.sim.materialize(tmp.dir, ROOT);
    const check = await checkStore([join(tmp.dir, '_turn_journal')]);
    const session = check.sessions.find((s) => s.sessionId === SESSION);
    return {
      states: Object.fromEntries((session?.turns ?? []).map((t) => [t.turnId, t.state])),
      codes: check.findings.map((f) => f.code),
    };
  } finally {
    tmp.remove();
  }
}

const BAD_CODES = new Set([
  'malformed_line',
  'glued_record',
  'zero_filled_region',
  'invalid_record',
  'duplicate_event',
]);

/** The oracle: file = model lines, reader states = model states, writer states = model states, no damage. */
async function checkAgainstModel(model: Model, real: Real): Promise<void> {
  expect(fileLines(real).lines).toEqual(model.lines);
  const { states, codes } = await derive(real);
  const expected = Object.fromEntries([...model.turns].map(([id, t]) => [id, t.state]));
  expect(states).toEqual(expected);
  expect(codes.filter((code) => BAD_CODES.has(code))).toEqual([]);
  for (const [id, turn] of model.turns) expect(real.journal?.stateOf(id)).toBe(turn.state);
}

async function expectOutcome(model: Model, real: Real, op: Operation): Promise<void> {
  const predicted = predict(model, op);
  const journal = real.journal as TurnJournal;
  if ('error' in predicted) {
    if (predicted.error === '') {
      // A retry of the same submission: acknowledged without writing (TJ-TURN-003).
      const result = (await call(journal, op)) as { created: boolean; state: string };
      expect(result.created).toBe(false);
      expect(result.state).toBe(model.turns.get(op.turnId)?.state);
      return;
    }
    await expect(call(journal, op)).rejects.toMatchObject({ code: predicted.error });
    return;
  }
  const result = await call(journal, op);
  if (op.kind === 'submit') expect(result).toMatchObject({ created: true, state: 'submitted' });
  apply(model, op, predicted.line, predicted.state);
}

class OpCommand implements fc.AsyncCommand<Model, Real> {
  constructor(readonly op: Operation) {}
  check(): boolean {
    return true;
  }
  async run(model: Model, real: Real): Promise<void> {
    real.log.push(describeOp(this.op));
    await expectOutcome(model, real, this.op);
  }
  toString(): string {
    return describeOp(this.op);
  }
}

/** True when `error` is, or was caused by, a call of the simulated file system after its crash point. */
function isCrash(error: unknown): boolean {
  for (let at: unknown = error; at !== undefined && at !== null; at = (at as { cause?: unknown }).cause) {
    if (at instanceof SimulatedCrashError || (at as { errno?: unknown }).errno === 'ESIMCRASH') return true;
  }
  return false;
}

/** Power loss with `op` in flight: the crash point falls `after` calls into it. */
class CrashCommand implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly op: Operation,
    readonly after: number,
    readonly seed: number,
  ) {}
  check(): boolean {
    return true;
  }
  async run(model: Model, real: Real): Promise<void> {
    real.log.push(this.toString());
    const predicted = predict(model, this.op);
    real.sim.crashAtCall(real.sim.calls + this.after);
    let acked = false;
    let inFlight: Line | undefined;
    try {
      await call(real.journal as TurnJournal, this.op);
      acked = true;
    } catch (error) {
      // Either the predicted refusal or the crash (what survived is judged below); nothing else.
      const refused =
        'error' in predicted && predicted.error !== '' && (error as { code?: unknown }).code === predicted.error;
      expect(refused || isCrash(error), `${describeOp(this.op)} failed with ${String(error)}`).toBe(true);
    }
    let state: State | undefined;
    if (!('error' in predicted)) {
      inFlight = predicted.line;
      state = predicted.state;
    }
    const report = real.sim.crash(seededRandom(this.seed));
    real.log.push(`  crash image: ${JSON.stringify(report)}`);
    real.journal = undefined;
    // Survivors: the durable lines, plus the in-flight record if it reached the disk; acked means it must have.
    const survivors = fileLines(real).lines;
    if (inFlight !== undefined && (acked || survivors.length > model.lines.length))
      apply(model, this.op, inFlight, state as State);
    expect(survivors).toEqual(model.lines);
    await open(real);
    await checkAgainstModel(model, real);
  }
  toString(): string {
    return `crash(during ${describeOp(this.op)}, after ${this.after} calls, seed ${this.seed})`;
  }
}

/**
 * A failing file-system call under an operation: ENOSPC on its write or EIO on its fdatasync. A predicted append must
 * be rejected with an error naming the operation and cause (TJ-DUR-022); a failed write leaves nothing behind
 * (TJ-DUR-023); a failed sync makes the writer refuse every later append until it is reopened (TJ-DUR-021). The
 * reopened file must hold the model's records, plus the rejected one only when its bytes stayed.
 */
class FaultCommand implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly op: Operation,
    readonly fault: 'write' | 'fdatasync',
  ) {}
  check(): boolean {
    return true;
  }
  async run(model: Model, real: Real): Promise<void> {
    real.log.push(this.toString());
    const predicted = predict(model, this.op);
    real.sim.inject({ op: this.fault, path: FILE, errno: this.fault === 'write' ? 'ENOSPC' : 'EIO' });
    // A full disk stays full when the writer tries the line again without its pre-allocated space (spec §11.6).
    if (this.fault === 'write') real.sim.inject({ op: 'write', nth: 2, path: FILE, errno: 'ENOSPC' });
    const journal = real.journal as TurnJournal;
    if ('error' in predicted) {
      // Nothing is written, so the fault never fires: the model's answer stands.
      real.sim.clearFaults();
      await expectOutcome(model, real, this.op);
      return;
    }
    const error = await call(journal, this.op).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    real.sim.clearFaults();
    expect(error).toMatchObject({
      code: 'write_failed',
      operation: this.fault,
      errno: this.fault === 'write' ? 'ENOSPC' : 'EIO',
    });
    if (this.fault === 'fdatasync') {
      // Poisoned: even a step the model allows is refused now (TJ-DUR-021).
      await expect(journal.submit({ turnId: 'fresh', content: 'x' })).rejects.toMatchObject({
        code: 'writer_poisoned',
      });
    }
    const survivors = fileLines(real).lines;
    if (survivors.length > model.lines.length) apply(model, this.op, predicted.line, predicted.state);
    if (this.fault === 'write') expect(survivors).toEqual(model.lines);
    await journal.close();
    await open(real);
    await checkAgainstModel(model, real);
  }
  toString(): string {
    return `fault(${this.fault} fails during ${describeOp(this.op)})`;
  }
}

class ReopenCommand implements fc.AsyncCommand<Model, Real> {
  check(): boolean {
    return true;
  }
  async run(model: Model, real: Real): Promise<void> {
    real.log.push('reopen');
    await real.journal?.close();
    await open(real);
    await checkAgainstModel(model, real);
  }
  toString(): string {
    return 'reopen';
  }
}

/** Runs a tool that works on real files (recovery, sweep) on a materialized copy, then loads the result back. */
async function onRealCopy<T>(real: Real, tool: (dir: string) => Promise<T>): Promise<T> {
  await real.journal?.close();
  real.journal = undefined;
  const tmp = realTempDir('tj-model-tool-');
  try {
    real.sim.materialize(tmp.dir, ROOT);
    removeLocks(tmp.dir);
    const result = await tool(join(tmp.dir, '_turn_journal'));
    real.sim.clear(ROOT);
    real.sim.load(tmp.dir, ROOT);
    return result;
  } finally {
    tmp.remove();
  }
}

class RecoverCommand implements fc.AsyncCommand<Model, Real> {
  check(): boolean {
    return true;
  }
  async run(model: Model, real: Real): Promise<void> {
    real.log.push('recover');
    const recovery = await onRealCopy(real, (dir) =>
      recoverStore([dir], { apply: true, hooks: JOURNAL_ONLY_HOOKS, clock: () => (real.clock += 1000) }),
    );
    // Every pending turn, and only those, is closed as interrupted (TJ-RECOV-006, TJ-RECOV-007).
    const pending = [...model.turns]
      .filter(([, t]) => !terminal(t.state))
      .map(([id]) => id)
      .sort();
    expect(
      recovery.turns
        .filter((t) => t.outcome === 'recovered')
        .map((t) => t.turnId)
        .sort(),
    ).toEqual(pending);
    const appended = fileLines(real).lines.slice(model.lines.length);
    expect(appended.map((l) => l.turnId).sort()).toEqual(pending);
    for (const id of pending) (model.turns.get(id) as { state: State }).state = 'interrupted';
    model.lines.push(...appended.map((l) => ({ ...l, event: 'interrupted' })));
    await open(real);
    await checkAgainstModel(model, real);
  }
  toString(): string {
    return 'recover';
  }
}

class CompactCommand implements fc.AsyncCommand<Model, Real> {
  check(): boolean {
    return true;
  }
  async run(model: Model, real: Real): Promise<void> {
    real.log.push('compact');
    const before = fileLines(real).raw;
    const report = await onRealCopy(real, (dir) =>
      sweepTurnJournals(dir, { retentionSeconds: 0, clock: () => EPOCH_MS + 10 ** 10 }),
    );
    real.log.push(`  sweep: ${JSON.stringify(report.sessions)}`);
    const pruned = new Set(report.sessions.flatMap((s) => s.prunedTurnIds));
    const terminalIds = [...model.turns].filter(([, t]) => terminal(t.state)).map(([id]) => id);
    // Only a clean audit allows pruning (TJ-RET-002): a pending turn blocks the session. A clean session loses exactly
    // its terminal turns (everything is older than the window and counts as delivered).
    const clean = [...model.turns.values()].every((t) => terminal(t.state));
    expect([...pruned].sort()).toEqual(clean ? terminalIds.sort() : []);
    const after = fileLines(real);
    if (pruned.size > 0) {
      // Retained lines byte for byte and in order, then one `compacted` record (TJ-COMPAT-004, TJ-RET-005..007).
      const kept = before.filter((text) => !pruned.has((JSON.parse(text) as { turn_id: string }).turn_id));
      expect(after.raw.slice(0, -1)).toEqual(kept);
      expect(after.lines.at(-1)?.event).toBe('compacted');
      for (const id of pruned) {
        model.turns.delete(id);
        model.retired.add(id);
      }
      model.lines = after.lines;
    }
    await open(real);
    await checkAgainstModel(model, real);
  }
  toString(): string {
    return 'compact';
  }
}

const turnId = fc.constantFrom('t0', 't1', 't2', 't3');
const content = fc.constantFrom('hello', 'other');
const step = fc.constantFrom<Step>('worker_started', 'assistant_started', 'completed', 'interrupted');
const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ kind: fc.constant('submit' as const), turnId, content }),
  fc.record({ kind: fc.constant('step' as const), turnId, step }),
);

const commands = fc.commands(
  [
    operation.map((op) => new OpCommand(op)),
    operation.map((op) => new OpCommand(op)),
    fc
      .tuple(operation, fc.integer({ min: 0, max: 12 }), fc.integer({ min: 0, max: 0x7fffffff }))
      .map(([op, after, seed]) => new CrashCommand(op, after, seed)),
    fc
      .tuple(operation, fc.constantFrom<'write' | 'fdatasync'>('write', 'fdatasync'))
      .map(([op, fault]) => new FaultCommand(op, fault)),
    fc.constant(new ReopenCommand()),
    fc.constant(new RecoverCommand()),
    fc.constant(new CompactCommand()),
  ],
  { maxCommands: 25 },
);

describe('turn journal writer against the §10 model on the simulated file system (TJ-CONF-009)', () => {
  it('acked records survive crashes; states match the model through reopen, recovery and compaction (TJ-CONF-009, TJ-DUR-001, TJ-DUR-024, TJ-TURN-003, TJ-DERIVE-001, TJ-DERIVE-006, TJ-DUR-019, TJ-DUR-021, TJ-DUR-022, TJ-DUR-023)', async () => {
    let failingLog: string[] = [];
    await checkProperty(
      'turn journal model (TJ-CONF-009)',
      fc.asyncProperty(commands, async (cmds) => {
        const sim = new SimulatedFileSystem();
        const real: Real = { sim, journal: undefined, clock: EPOCH_MS, log: [] };
        await open(real);
        const model: Model = { turns: new Map(), lines: [], retired: new Set() };
        try {
          await fc.asyncModelRun(() => ({ model, real }), cmds);
        } catch (error) {
          failingLog = real.log;
          throw error;
        } finally {
          await real.journal?.close().catch(() => undefined);
        }
      }),
      { defaultRuns: 100, explain: () => failingLog.join('\n') },
    );
  }, 300_000);
});
