import { join } from 'node:path';
import { replayEventLog } from '@turnjournal/reader';
import { validateRecord } from '@turnjournal/schema';
import {
  compactEventLog,
  JOURNAL_ONLY_HOOKS,
  openEventLog,
  openRunWriter,
  openTurnJournal,
  recoverStore,
  sweepStoreTurnJournals,
  WriterError,
  writeStateDocument,
} from '@turnjournal/writer';
import { AppendFile } from '@turnjournal/writer/file-system';
import { readStoreReference } from '../fixtures/run-store-fixtures.js';
import type { AdapterImplementation, LifecycleOperations, RetentionOperations } from './adapter-implementation.js';
import {
  ADAPTER_DURABILITIES,
  ADAPTER_FAMILIES,
  ADAPTER_FEATURES,
  ADAPTER_LEVELS,
  type ReadResult,
} from './protocol.js';
import { referenceLiveOperations } from './reference-live.js';
import { referenceRepresentatives } from './reference-representatives.js';
import { AdapterRequestError, refusingWhen } from './request-error.js';

// The reference implementation of every adapter op: @turnjournal/reader for reading, @turnjournal/writer for writing.

/** The reference `retention` operations: @turnjournal/writer's sweep and compaction. */
const referenceRetention: RetentionOperations = {
  async sweep({ root, now, windowSeconds }) {
    // An absent window is the sweep's own default (TJ-RET-001).
    const report = await sweepStoreTurnJournals(root, { clock: () => now, retentionSeconds: windowSeconds });
    return report.sessions
      .filter((session) => session.prunedTurnIds.length > 0)
      .map((session) => ({ sessionId: session.sessionId, pruned: [...session.prunedTurnIds] }));
  },
  async compact({ file, now, windowSeconds, deliveryWindowSeconds }) {
    const result = await compactEventLog(file, { now, retentionSeconds: windowSeconds, deliveryWindowSeconds });
    return { removedRecords: result.removedRecords + result.removedDamagedLines, expired: [...result.expiredRuns] };
  },
};

/** Writer errors that are a refusal by a rule of the spec, answered `refused` (adapter.md §5.4). */
const REFUSALS = new Set(['turn_id_conflict', 'illegal_transition']);

/** Runs `call`, answering a writer's refusal with `refused` rather than `failed`. */
const refusing = <T>(call: () => Promise<T>) =>
  refusingWhen((error) => error instanceof WriterError && REFUSALS.has(error.code), call);

/** Opens a writer, runs `body` with it, and closes it however `body` ends. */
async function withWriter<W extends { close(): Promise<void> }, T>(
  open: () => Promise<W>,
  body: (writer: W) => Promise<T>,
): Promise<T> {
  const writer = await open();
  try {
    return await refusing(() => body(writer));
  } finally {
    await writer.close();
  }
}

/** The reference `lifecycle` operations: @turnjournal/writer's TurnJournal and EventLog. */
const referenceLifecycle: LifecycleOperations = {
  turnSubmit: ({ root, sessionId, turnId, content }) =>
    withWriter(
      () => openTurnJournal({ dir: join(root, '_turn_journal'), sessionId }),
      async (journal) => ({ created: (await journal.submit({ turnId, content })).created }),
    ),
  turnEvent: ({ root, sessionId, turnId, event, reason }) =>
    withWriter(
      () => openTurnJournal({ dir: join(root, '_turn_journal'), sessionId }),
      async (journal) => {
        if (event === 'worker_started') await journal.workerStarted(turnId);
        else if (event === 'assistant_started') await journal.assistantStarted(turnId);
        else if (event === 'completed') await journal.complete(turnId);
        else await journal.interrupt(turnId, reason ?? 'error');
      },
    ),
  eventAppend: ({ file, type, payload }) =>
    withWriter(
      () => openEventLog({ file }),
      async (log) => ({ seq: (await log.append(type, payload)).seq }),
    ),
  runStep: (request) =>
    withWriter(
      () => openRunWriter({ file: request.file, runId: request.runId, header: { startedAt: request.startedAt } }),
      async (run) => {
        switch (request.step) {
          case 'start':
            await run.runStart(request.input as { type: string });
            return {};
          case 'agent_event':
            return { seq: (await run.agentEvent((request.event ?? {}) as { type: string })).seq };
          case 'llm_request':
            // The writer validates what it writes (TJ-COMPAT-018): a malformed input is refused there, not here.
            return { seq: (await run.llmRequest({ input: request.input as never })).seq };
          case 'llm_response':
            await run.llmResponse({ seq: request.seq as number, output: request.output as never });
            return {};
          case 'end':
            await run.end({ outcome: request.outcome ?? 'completed' });
            return {};
        }
      },
    ),
  stateWrite: async ({ root, sessionId, messages }) => {
    await writeStateDocument({ root, sessionId, state: { messages: messages as { role: string }[] } });
  },
};

/** The reference implementation: @turnjournal/reader for reading, @turnjournal/writer's AppendFile for writing. */
export const referenceImplementation: AdapterImplementation = {
  capabilities: {
    name: '@turnjournal/reference',
    version: '0.0.0',
    language: `node ${process.versions.node}`,
    protocol: 1,
    levels: [...ADAPTER_LEVELS],
    families: [...ADAPTER_FAMILIES],
    durability: [...ADAPTER_DURABILITIES],
    // Not `store-lines`: this writer keeps each journal at the path the harness names (referenceStoreLinesImplementation
    // is the one that does not).
    features: ADAPTER_FEATURES.filter((feature) => feature !== 'store-lines'),
  },
  lifecycle: referenceLifecycle,
  retention: referenceRetention,
  live: referenceLiveOperations,
  async recover(root) {
    const recovery = await recoverStore([root], { apply: true, hooks: JOURNAL_ONLY_HOOKS });
    return recovery.turns
      .filter((turn) => turn.outcome === 'recovered')
      .map((turn) => ({ sessionId: turn.sessionId, turnId: turn.turnId }));
  },
  async read(paths, mode, audit, maxLineBytes, representatives) {
    const limit = maxLineBytes === undefined ? {} : { maxLineBytes };
    const reading = await readStoreReference(paths, { mode, audit, ...limit });
    return {
      turns: reading.turns as ReadResult['turns'],
      findings: reading.findings.map((f) =>
        Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined)),
      ) as ReadResult['findings'],
      runs: reading.runs as ReadResult['runs'],
      // When the reference's two readings of a log disagree, answer the whole-file fold.
      event_logs: Object.fromEntries(
        Object.entries(reading.event_logs).map(([file, state]) => [file, 'fold' in state ? state.fold : state]),
      ) as ReadResult['event_logs'],
      ...(audit ? { plan: reading.plan as NonNullable<ReadResult['plan']> } : {}),
      ...(representatives === true
        ? { representatives: await referenceRepresentatives(paths, { mode, ...limit }) }
        : {}),
    };
  },
  async replay(file, after, epoch) {
    const answer = await replayEventLog(file, { after, ...(epoch === undefined ? {} : { epoch }) });
    return answer.kind === 'records'
      ? { seqs: answer.records.map((r) => r.value.seq as number) }
      : { reason: answer.reason };
  },
  async open(file, durability) {
    const appendFile = await AppendFile.open(file, { durability });
    return {
      append: async (record) => {
        // A writer never writes a record its v1 schema rejects (TJ-COMPAT-018, TJ-TURN-015).
        const validation = validateRecord(record);
        if (validation.status !== 'valid' && validation.status !== 'unknown' && validation.status !== 'extension')
          throw new AdapterRequestError(
            'bad_request',
            validation.status === 'invalid'
              ? `invalid record: ${validation.errors.map((e) => e.message).join('; ')}`
              : 'a record of another major version is not written',
          );
        await appendFile.appendRecord(record);
      },
      close: () => appendFile.close(),
    };
  },
};
