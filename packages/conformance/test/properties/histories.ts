// Valid histories of every JSONL family, written by the reference writer APIs on the simulated file system (fast: no
// disk), and the reference reader's observation of a store on real files. Shared by the reader property suites.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { FINDING_CODES, type FindingCode } from '@turnjournal/schema';
import { openEventLog, openRunWriter, openTurnJournal } from '@turnjournal/writer';
import fc from 'fast-check';
import { referenceStoreReader, type StoreFixtureCase, type StoreObservation } from '../../src/fixtures/index.js';
import { SimulatedFileSystem } from '../../src/simulated-fs/index.js';

const EPOCH_MS = 1_778_458_282_123;

/** One generated history: the file's place in a store (relative path) and its bytes. */
export interface History {
  readonly family: 'turn' | 'event' | 'run';
  readonly path: string;
  readonly bytes: Uint8Array;
}

/** Opcodes interpreted against the writer; the ones the writer refuses write nothing and are skipped. */
export type Opcode = readonly [number, number];

const opcodes = (max: number) =>
  fc.array(fc.tuple(fc.nat(20), fc.nat(20)) as fc.Arbitrary<Opcode>, { minLength: 1, maxLength: max });

function clock(): () => number {
  let now = EPOCH_MS;
  return () => (now += 1234);
}

async function ignoreRefusal(call: () => Promise<unknown>): Promise<void> {
  try {
    await call();
  } catch (error) {
    if ((error as { code?: string }).code === undefined) throw error;
  }
}

/**
 * A turn journal written by openTurnJournal from opcodes: up to five turns of session `s1` in every state. With
 * `closeAll` every turn left pending is interrupted at the end, so that a retention sweep finds a clean audit.
 */
export async function turnHistory(codes: readonly Opcode[], closeAll = false): Promise<History> {
  const sim = new SimulatedFileSystem();
  const journal = await openTurnJournal({ dir: '/s/_turn_journal', sessionId: 's1', fs: sim, clock: clock() });
  // Never empty: a first turn is always submitted.
  await journal.submit({ turnId: 't0', content: 'first' });
  for (const [op, arg] of codes) {
    const turnId = `t${arg % 5}`;
    await ignoreRefusal(async () => {
      switch (op % 6) {
        case 0:
        case 1:
          return journal.submit({ turnId, content: `content ${arg} \u2028 "q" é` });
        case 2:
          return journal.workerStarted(turnId);
        case 3:
          return journal.assistantStarted(turnId, { assistantMessageIndex: arg });
        case 4:
          return journal.complete(turnId, { assistantMessageIndex: arg % 2 === 0 ? null : arg });
        default:
          return journal.interrupt(turnId, arg % 2 === 0 ? 'cancelled' : 'rate_limit');
      }
    });
  }
  if (closeAll) for (const { turnId } of journal.pendingTurns()) await journal.interrupt(turnId, 'cancelled');
  await journal.close();
  return { family: 'turn', path: '_turn_journal/s1.jsonl', bytes: sim.peek('/s/_turn_journal/s1.jsonl') as Uint8Array };
}

/** An event log written by openEventLog from opcodes: messages, edits, undo, runs with deltas, acks, checkpoints. */
export async function eventHistory(codes: readonly Opcode[]): Promise<History> {
  const sim = new SimulatedFileSystem();
  const log = await openEventLog({ root: '/s', sessionId: 's1', fs: sim, clock: clock(), checkpointInterval: 5 });
  // Never empty: a first message is always appended.
  await log.appendMessage({ role: 'user', content: 'first' });
  let run = 0;
  let open: string | undefined;
  for (const [op, arg] of codes) {
    await ignoreRefusal(async () => {
      switch (op % 8) {
        case 0:
        case 1:
          return log.appendMessage({ role: arg % 2 === 0 ? 'user' : 'assistant', content: `m${arg}` });
        case 2:
          return log.editMessage(0, { role: 'user', content: `edited ${arg}` });
        case 3:
          return log.undo(1 + (arg % 2));
        case 4:
          if (open !== undefined) return log.chatDone({ requestId: open }).then(() => log.ack(open as string));
          open = `r${run++}`;
          return log.chatStarted({ requestId: open, content: `ask ${arg}` });
        case 5:
          if (open === undefined) return;
          await log.segmentStarted({ requestId: open, messageId: `${open}-m` });
          return log.delta({ requestId: open, messageId: `${open}-m`, text: `d${arg} ` });
        case 6:
          if (open === undefined) return;
          await log.chatDone({ requestId: open });
          open = undefined;
          return;
        default:
          return log.checkpoint();
      }
    });
  }
  await log.close();
  return { family: 'event', path: 's1/events.jsonl', bytes: sim.peek('/s/s1/events.jsonl') as Uint8Array };
}

/** A run file written by openRunWriter from opcodes: requests and responses, tool outputs, statuses, an end. */
export async function runHistory(codes: readonly Opcode[]): Promise<History> {
  const sim = new SimulatedFileSystem();
  const writer = await openRunWriter({
    root: '/s',
    runId: 'run1',
    header: { startedAt: '2026-05-11T00:11:22Z', sessionId: 's1' },
    fs: sim,
    clock: clock(),
  });
  let pending: number | undefined;
  for (const [op, arg] of codes) {
    await ignoreRefusal(async () => {
      switch (op % 6) {
        case 0:
        case 1: {
          const ack = await writer.llmRequest({ input: { messages: [{ role: 'user', content: `q${arg}` }] } });
          pending = ack.seq;
          return;
        }
        case 2:
          if (pending === undefined) return;
          await writer.llmResponse({ seq: pending, output: { messages: [{ role: 'assistant', content: `a${arg}` }] } });
          pending = undefined;
          return;
        case 3:
          return writer.toolOutput({ tool: 'sh', toolCallId: `c${arg}`, resultRaw: `out ${arg}\n` });
        case 4:
          return writer.status(arg % 2 === 0 ? 'running' : 'waiting_for_tool');
        default:
          if (arg % 4 === 0) return writer.end({ outcome: arg % 8 === 0 ? 'success' : 'failed' });
          return;
      }
    });
  }
  await writer.close();
  // The header's start date places the file (spec §4.4).
  const path = 'sessions/2026/05/11/run1.jsonl';
  return { family: 'run', path, bytes: sim.peek(`/s/${path}`) as Uint8Array };
}

/** Arbitrary histories of one family. */
export const histories = {
  turn: opcodes(30).map((codes) => ({ codes, make: () => turnHistory(codes) })),
  event: opcodes(18).map((codes) => ({ codes, make: () => eventHistory(codes) })),
  run: opcodes(20).map((codes) => ({ codes, make: () => runHistory(codes) })),
} as const;

/** Writes `files` (relative path → bytes) under `root`. */
export function writeStoreFiles(root: string, files: Readonly<Record<string, Uint8Array>>): void {
  for (const [path, bytes] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), bytes);
  }
}

const CASE = {
  description: 'property',
  requirements: ['TJ-CONF-002'],
  files: [],
  expect: {},
} as unknown as StoreFixtureCase;

/** The reference reader's observation of the store at `root` (derived turns, runs, event logs, findings). */
export function observe(root: string): Promise<StoreObservation> {
  return referenceStoreReader(root, CASE);
}

/** Severity of a finding code. */
export function severityOf(code: string): string {
  return FINDING_CODES[code as FindingCode]?.severity ?? 'error';
}

/** The bytes up to and including the last LF at or before `cut`. */
export function completeRecords(bytes: Uint8Array, cut: number): Uint8Array {
  return bytes.subarray(0, bytes.subarray(0, cut).lastIndexOf(0x0a) + 1);
}
