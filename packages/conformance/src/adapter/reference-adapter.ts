import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { LiveError } from '@turnjournal/live';
import { replayEventLog } from '@turnjournal/reader';
import { validateRecord } from '@turnjournal/schema';
import {
  compactEventLog,
  type Durability,
  JOURNAL_ONLY_HOOKS,
  JournalLockedError,
  openEventLog,
  openRunWriter,
  openTurnJournal,
  recoverStore,
  sweepStoreTurnJournals,
  WriterError,
  writeStateDocument,
} from '@turnjournal/writer';
import { AppendFile } from '@turnjournal/writer/file-system';
import { Compile } from 'typebox/compile';
import { readStoreReference } from '../fixtures/run-store-fixtures.js';
import {
  ADAPTER_DURABILITIES,
  ADAPTER_FAMILIES,
  ADAPTER_FEATURES,
  ADAPTER_LEVELS,
  type AdapterErrorCode,
  AdapterRequest,
  type ReadResult,
  type ReplayResult,
  type StartResult,
} from './protocol.js';
import { type LiveOperations, referenceLiveOperations } from './reference-live.js';
import { AdapterRequestError } from './request-error.js';

/** One open journal file on the adapter side. */
export interface AdapterWriter {
  /** Appends one record; resolves once it is durable in the file's mode (TJ-CONF-014). */
  append(record: Record<string, unknown>): Promise<void>;
  /** Flushes, closes and releases the lock. */
  close(): Promise<void>;
}

/** The parts of an adapter a test can swap, to build a deliberately broken adapter on the reference one. */
export interface AdapterImplementation {
  /** Capabilities answered to `start`. */
  readonly capabilities: StartResult;
  /** `read`. */
  read(
    paths: readonly string[],
    mode: 'tolerant' | 'prefix' | 'strict',
    audit: boolean,
    maxLineBytes?: number,
  ): Promise<ReadResult>;
  /** `replay`. */
  replay(file: string, after: number): Promise<ReplayResult>;
  /** `open`: throws `JournalLockedError` (of @turnjournal/writer) when another writer holds the file. */
  open(file: string, durability: Durability): Promise<AdapterWriter>;
  /** The operations of feature `lifecycle` (adapter.md §5.4); absent when the feature is not claimed. */
  readonly lifecycle?: LifecycleOperations;
  /**
   * Feature `recovery` (adapter.md §5.5): applies startup recovery to the store at `root` with no host transcript, and
   * resolves with the turns it closed as interrupted.
   */
  readonly recover?: (root: string) => Promise<{ sessionId: string; turnId: string }[]>;
  /** Feature `retention` (adapter.md §5.6): the sweep and the compaction; absent when the feature is not claimed. */
  readonly retention?: RetentionOperations;
  /** Feature `live` (adapter.md §5.7): makes the live sessions one adapter process serves. */
  readonly live?: () => LiveOperations;
}

/** Feature `lifecycle`: each call opens the session's writer, makes one call, and closes it (adapter.md §5.4). */
export interface LifecycleOperations {
  /** `turn_submit`: resolves with whether a record was written; throws a refusal as `AdapterRequestError('refused')`. */
  turnSubmit(request: {
    root: string;
    sessionId: string;
    turnId: string;
    content: string;
  }): Promise<{ created: boolean }>;
  /** `turn_event`: writes the turn's next step, or throws a refusal. */
  turnEvent(request: {
    root: string;
    sessionId: string;
    turnId: string;
    event: 'worker_started' | 'assistant_started' | 'completed' | 'interrupted';
    reason?: string;
  }): Promise<void>;
  /** `event_append`: appends through the event-log writer and resolves with the seq it gave the record. */
  eventAppend(request: { file: string; type: string; payload: Record<string, unknown> }): Promise<{ seq: number }>;
  /** `run_step`: writes one record through the run writer; resolves with the seq it gave an agent event or request. */
  runStep(request: RunStep): Promise<{ seq?: number }>;
  /** `state_write`: replaces the session's state document `<root>/sessions/state/<sessionId>.json`. */
  stateWrite(request: { root: string; sessionId: string; messages: Record<string, unknown>[] }): Promise<void>;
}

/** One `run_step` request (adapter.md §5.4): the run file, its run id and header time, and the step to write. */
export interface RunStep {
  readonly file: string;
  readonly runId: string;
  /** The header's `started_at`, used when the file is new. */
  readonly startedAt: string;
  readonly step: 'start' | 'agent_event' | 'llm_request' | 'llm_response' | 'end';
  /** `start` and `llm_request`. */
  readonly input?: unknown;
  /** `agent_event`. */
  readonly event?: Record<string, unknown>;
  /** `llm_response`: the seq of the request it answers. */
  readonly seq?: number;
  /** `llm_response`. */
  readonly output?: unknown;
  /** `end`. */
  readonly outcome?: string;
}

/** Feature `retention` (adapter.md §5.6): the retention sweep and the event-log compaction, at a given time. */
export interface RetentionOperations {
  /** `sweep`: sweeps `<root>/_turn_journal` at `now` (epoch ms); resolves with the turns pruned per session. */
  sweep(request: {
    root: string;
    now: number;
    /** Absent: the sweep's default window (TJ-RET-001). */
    windowSeconds?: number;
  }): Promise<{ sessionId: string; pruned: string[] }[]>;
  /** `compact`: compacts the event log `file` at `now`; resolves with the lines removed and the expired runs. */
  compact(request: {
    file: string;
    now: number;
    /** Absent: the compaction's default retention window. */
    windowSeconds?: number;
    /** Absent: the default delivery window (TJ-LIVE-015). */
    deliveryWindowSeconds?: number;
  }): Promise<{ removedRecords: number; expired: string[] }>;
}

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

/** Writer errors about what the request asked for: an invalid record, or an id no path may be built from (TJ-FAM-010). */
const BAD_REQUESTS = new Set(['invalid_record', 'invalid_identifier']);

/** Writer errors that are a refusal by a rule of the spec, answered `refused` (adapter.md §5.4). */
const REFUSALS = new Set(['turn_id_conflict', 'illegal_transition']);

/** Runs `call`, answering a writer's refusal with `refused` rather than `failed`. */
async function refusing<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof WriterError && REFUSALS.has(error.code))
      throw new AdapterRequestError('refused', error.message);
    throw error;
  }
}

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

/** One `lifecycle` request (adapter.md §5.4) served by `lifecycle`, with the protocol's names mapped to its own. */
async function lifecycleCall(
  lifecycle: LifecycleOperations,
  request: Extract<AdapterRequest, { op: 'turn_submit' | 'turn_event' | 'event_append' | 'run_step' | 'state_write' }>,
): Promise<Record<string, unknown>> {
  switch (request.op) {
    case 'turn_submit':
      return lifecycle.turnSubmit({
        root: request.root,
        sessionId: request.session_id,
        turnId: request.turn_id,
        content: request.content,
      });
    case 'turn_event':
      await lifecycle.turnEvent({
        root: request.root,
        sessionId: request.session_id,
        turnId: request.turn_id,
        event: request.event,
        ...(request.reason === undefined ? {} : { reason: request.reason }),
      });
      return {};
    case 'event_append':
      return lifecycle.eventAppend({ file: request.file, type: request.type, payload: request.payload });
    case 'state_write':
      await lifecycle.stateWrite({ root: request.root, sessionId: request.session_id, messages: request.messages });
      return {};
    case 'run_step':
      return lifecycle.runStep({
        file: request.file,
        runId: request.run_id,
        startedAt: request.started_at,
        step: request.step,
        ...(request.input === undefined ? {} : { input: request.input }),
        ...(request.event === undefined ? {} : { event: request.event }),
        ...(request.seq === undefined ? {} : { seq: request.seq }),
        ...(request.output === undefined ? {} : { output: request.output }),
        ...(request.outcome === undefined ? {} : { outcome: request.outcome }),
      });
  }
}

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
    features: [...ADAPTER_FEATURES],
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
  async read(paths, mode, audit, maxLineBytes) {
    const reading = await readStoreReference(paths, {
      mode,
      audit,
      ...(maxLineBytes === undefined ? {} : { maxLineBytes }),
    });
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
    };
  },
  async replay(file, after) {
    const answer = await replayEventLog(file, { after });
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

type LiveRequest = Extract<
  AdapterRequest,
  { op: 'live_open' | 'live_send' | 'live_step' | 'live_snapshot' | 'live_ack' | 'live_subscribe' }
>;

/** Serves one `live_*` request (adapter.md §5.7). */
async function serveLive(live: LiveOperations, request: LiveRequest): Promise<Record<string, unknown>> {
  const ref = { root: request.root, sessionId: request.session_id };
  switch (request.op) {
    case 'live_open':
      return { last_seq: (await live.open(ref)).lastSeq };
    case 'live_send':
      return await live.send(ref, request.request_id, request.content);
    case 'live_step':
      await live.step(ref, request.request_id, {
        step: request.step,
        ...(request.text === undefined ? {} : { text: request.text }),
        ...(request.tool_call_id === undefined ? {} : { toolCallId: request.tool_call_id }),
        ...(request.tool === undefined ? {} : { tool: request.tool }),
        ...(request.output === undefined ? {} : { output: request.output }),
        ...(request.message === undefined ? {} : { message: request.message }),
        ...(request.reason === undefined ? {} : { reason: request.reason }),
      });
      return {};
    case 'live_snapshot':
      return { ...(await live.snapshot(ref, request.client_id)) };
    case 'live_ack':
      await live.ack(ref, request.request_id, {
        ...(request.client_id === undefined ? {} : { clientId: request.client_id }),
        ...(request.through_seq === undefined ? {} : { throughSeq: request.through_seq }),
      });
      return {};
    case 'live_subscribe':
      return {
        events: await live.subscribe(ref, {
          after: request.after,
          ...(request.until_seq === undefined ? {} : { untilSeq: request.until_seq }),
          timeoutMs: request.timeout_ms ?? 5000,
        }),
      };
  }
}

const requestValidator = Compile(AdapterRequest);

/**
 * Runs an adapter over `input` (requests, one JSON object a line) and `output` (responses): the protocol of
 * spec/v1/adapter.md. Requests are handled as they arrive, so pipelined appends reach the writer in order and group
 * commit can batch them; each response is written only when its operation is done (an append once durable,
 * TJ-CONF-014). Nothing but responses goes to `output` (TJ-CONF-012); diagnostics go to `diagnostics` (TJ-CONF-013).
 * Resolves after `stop` (or the end of input) with every file closed.
 */
export async function runAdapter(
  input: Readable,
  output: Writable,
  implementation: AdapterImplementation = referenceImplementation,
  diagnostics: Writable = process.stderr,
): Promise<void> {
  const writers = new Map<string, AdapterWriter>();
  const live = implementation.live?.();
  let nextHandle = 1;
  let stopping: (() => void) | null = null;
  const stopped = new Promise<void>((resolve) => {
    stopping = resolve;
  });
  const respond = (value: unknown) => output.write(`${JSON.stringify(value)}\n`);
  const closeAll = async () => {
    for (const [handle, writer] of writers) {
      writers.delete(handle);
      await writer.close().catch(() => undefined);
    }
    await live?.close().catch(() => undefined);
  };

  const handle = async (request: AdapterRequest): Promise<Record<string, unknown>> => {
    const claims = implementation.capabilities;
    switch (request.op) {
      case 'start':
        return { ...claims };
      case 'read':
        if (!claims.levels.includes('reader')) throw new AdapterRequestError('unsupported', 'not a reader');
        if (request.audit === true && !(claims.features ?? []).includes('audit'))
          throw new AdapterRequestError('unsupported', 'feature audit is not supported');
        return await implementation.read(
          request.paths,
          request.mode ?? 'tolerant',
          request.audit === true,
          request.max_line_bytes,
        );
      case 'replay':
        if (!(claims.features ?? []).includes('replay'))
          throw new AdapterRequestError('unsupported', 'feature replay is not supported');
        return await implementation.replay(request.file, request.after);
      case 'open': {
        if (!claims.levels.includes('writer')) throw new AdapterRequestError('unsupported', 'not a writer');
        if (!claims.durability.includes(request.durability))
          throw new AdapterRequestError('unsupported', `durability ${request.durability} is not supported`);
        const writer = await implementation.open(request.file, request.durability);
        const id = `h${nextHandle++}`;
        writers.set(id, writer);
        return { handle: id };
      }
      case 'append': {
        const writer = writers.get(request.handle);
        if (writer === undefined) throw new AdapterRequestError('bad_request', `no open handle ${request.handle}`);
        await writer.append(request.record);
        return {};
      }
      case 'close': {
        const writer = writers.get(request.handle);
        if (writer === undefined) throw new AdapterRequestError('bad_request', `no open handle ${request.handle}`);
        writers.delete(request.handle);
        await writer.close();
        return {};
      }
      case 'turn_submit':
      case 'turn_event':
      case 'event_append':
      case 'run_step':
      case 'state_write': {
        const lifecycle = implementation.lifecycle;
        if (!(claims.features ?? []).includes('lifecycle') || lifecycle === undefined)
          throw new AdapterRequestError('unsupported', 'feature lifecycle is not supported');
        return await lifecycleCall(lifecycle, request);
      }
      case 'recover': {
        if (!(claims.features ?? []).includes('recovery') || implementation.recover === undefined)
          throw new AdapterRequestError('unsupported', 'feature recovery is not supported');
        const recovered = await implementation.recover(request.root);
        return { recovered: recovered.map((turn) => ({ session_id: turn.sessionId, turn_id: turn.turnId })) };
      }
      case 'sweep':
      case 'compact': {
        const retention = implementation.retention;
        if (!(claims.features ?? []).includes('retention') || retention === undefined)
          throw new AdapterRequestError('unsupported', 'feature retention is not supported');
        if (request.op === 'sweep') {
          const swept = await retention.sweep({
            root: request.root,
            now: request.now,
            windowSeconds: request.window_s,
          });
          return { sessions: swept.map((s) => ({ session_id: s.sessionId, pruned: s.pruned })) };
        }
        const compacted = await retention.compact({
          file: request.file,
          now: request.now,
          windowSeconds: request.window_s,
          deliveryWindowSeconds: request.delivery_window_s,
        });
        return { removed_records: compacted.removedRecords, expired: compacted.expired };
      }
      case 'live_open':
      case 'live_send':
      case 'live_step':
      case 'live_snapshot':
      case 'live_ack':
      case 'live_subscribe':
        if (!(claims.features ?? []).includes('live') || live === undefined)
          throw new AdapterRequestError('unsupported', 'feature live is not supported');
        return await serveLive(live, request);
      case 'stop':
        await closeAll();
        return {};
    }
  };

  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  lines.on('line', (line) => {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      diagnostics.write(`adapter: ignoring a line that is not JSON: ${line.slice(0, 200)}\n`);
      return;
    }
    const id = typeof (message as { id?: unknown })?.id === 'number' ? (message as { id: number }).id : 0;
    if (!requestValidator.Check(message)) {
      const op = (message as { op?: unknown })?.op;
      const known = [
        'start',
        'read',
        'replay',
        'open',
        'append',
        'close',
        'turn_submit',
        'turn_event',
        'event_append',
        'run_step',
        'state_write',
        'recover',
        'sweep',
        'compact',
        'live_open',
        'live_send',
        'live_step',
        'live_snapshot',
        'live_ack',
        'live_subscribe',
        'stop',
      ].includes(op as string);
      const errors = requestValidator
        .Errors(message)
        .slice(0, 3)
        .map((e) => `${e.instancePath || '(root)'} ${e.message}`)
        .join('; ');
      // An unknown op is answered, never by exiting (TJ-CONF-015).
      respond({
        id,
        ok: false,
        error: known
          ? { code: 'bad_request', message: errors }
          : { code: 'unsupported', message: `unknown op ${JSON.stringify(op)}` },
      });
      return;
    }
    const request = message as AdapterRequest;
    handle(request).then(
      (result) => {
        respond({ id: request.id, ok: true, result });
        if (request.op === 'stop') stopping?.();
      },
      (error: unknown) => {
        const code: AdapterErrorCode =
          error instanceof AdapterRequestError
            ? error.code
            : error instanceof JournalLockedError
              ? 'journal_locked'
              : (error instanceof WriterError && BAD_REQUESTS.has(error.code)) ||
                  (error instanceof LiveError && error.code === 'invalid_request')
                ? 'bad_request'
                : 'failed';
        diagnostics.write(`adapter: ${request.op} failed: ${(error as Error).stack ?? String(error)}\n`);
        respond({ id: request.id, ok: false, error: { code, message: (error as Error).message ?? String(error) } });
      },
    );
  });
  lines.on('close', () => {
    closeAll().then(() => stopping?.());
  });
  await stopped;
  lines.close();
}
