import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { replayEventLog } from '@turnjournal/reader';
import { validateRecord } from '@turnjournal/schema';
import { type Durability, JournalLockedError, WriterError } from '@turnjournal/writer';
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
}

/** An error the adapter answers with a given code. */
export class AdapterRequestError extends Error {
  /** The protocol error code. */
  readonly code: AdapterErrorCode;
  constructor(code: AdapterErrorCode, message: string) {
    super(message);
    this.code = code;
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
      const known = ['start', 'read', 'replay', 'open', 'append', 'close', 'stop'].includes(op as string);
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
              : error instanceof WriterError && error.code === 'invalid_record'
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
