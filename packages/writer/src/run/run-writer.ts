import { dirname } from 'node:path';
import type { Finding, RunHeader } from '@turnjournal/schema';
import {
  type AppendAck,
  AppendFile,
  DURABILITY_MODES,
  type Durability,
  type OpenReport,
} from '../append/append-file.js';
import { DEFAULT_MAX_LINE_BYTES } from '../append/encode-record.js';
import { WriterError } from '../errors.js';
import { ensureDirectory } from '../fs/durable-ops.js';
import { type FileSystem, nodeFileSystem } from '../fs/file-system.js';
import type { AcquireLockOptions } from '../fs/lock.js';
import { requireIdentifier } from '../require-identifier.js';
import { encodeRunRecord } from './encode-run-record.js';
import { type RunState, readExistingRun } from './read-existing-run.js';
import { runFilePath, toUtcTimestamp } from './run-path.js';

/** A chat message as run records carry it: a string `role`, any `content`, any other members (kept as given). */
export interface RunMessage {
  /** Author role: `user`, `assistant`, `system`, `tool` or any other string. */
  readonly role: string;
  /** Message content; any JSON value. */
  readonly content?: unknown;
  /** Further members (tool calls, timestamps, provider data) are written as given. */
  readonly [member: string]: unknown;
}

/** Model identification (`ModelInfo`): every member optional, further members kept. */
export interface RunModelInfo {
  /** Provider, e.g. `openai`. */
  readonly provider?: string;
  /** Model name. */
  readonly name?: string;
  /** Reasoning effort. */
  readonly reasoning?: string;
  /** Where the choice came from (config, flag, …). */
  readonly source?: string;
  /** Further members are written as given. */
  readonly [member: string]: unknown;
}

/** Free-form extension data; TJ-RUN-012 asks writers to put private data here rather than in new top-level members. */
export type RunMeta = Readonly<Record<string, unknown>>;

/** The caller's part of a run file's `header` (spec §7.2); the writer adds `type`, `schema_version` and `run_id`. */
export interface RunHeaderInput {
  /**
   * When the run started: an RFC 3339 timestamp (any offset) or a `Date`. It is written in UTC (TJ-FAM-021), and
   * with `root` its UTC date places the file (`sessions/YYYY/MM/DD`, spec §4.4). Pass the same value when reopening a
   * run: it is what finds the file again.
   */
  readonly startedAt: string | Date;
  /** Session the run belongs to (`session_id`). */
  readonly sessionId?: string;
  /** Client software that wrote the run. */
  readonly client?: { readonly name: string; readonly version: string };
  /** Server software that wrote the run. */
  readonly server?: { readonly name: string; readonly version: string };
  /** Model of the run. */
  readonly model?: RunModelInfo;
  /** Prompts in force. */
  readonly prompts?: { readonly system?: string };
  /** Tool definitions in force. */
  readonly tools?: { readonly definitions?: readonly unknown[]; readonly source?: string };
  /** Execution environment. */
  readonly runtime?: { readonly cwd?: string; readonly os?: string; readonly arch?: string; readonly version?: string };
  /** Extension data. */
  readonly meta?: RunMeta;
}

/** Options of {@link openRunWriter} shared by its `root` and `file` forms. */
export interface RunWriterCommonOptions {
  /** The run; a valid identifier (spec §4.3), checked before any path is built (TJ-FAM-010). */
  readonly runId: string;
  /** The header written when the file is new (TJ-RUN-003); on reopen only its `startedAt` is used (to find the file). */
  readonly header: RunHeaderInput;
  /** Durability mode; `every` by default (TJ-DUR-013). */
  readonly durability?: Durability;
  /** The file-system layer; the real one by default. */
  readonly fs?: FileSystem;
  /** Wall clock in epoch milliseconds, for every record's `ts`; `Date.now` by default. */
  readonly clock?: () => number;
  /** Line-size limit in bytes; 16 MiB by default. */
  readonly maxLineBytes?: number;
  /** Options of the lock acquisition. */
  readonly lock?: AcquireLockOptions;
  /**
   * The `seq` of the first `llm.request` numbered by the writer; 1 by default (seed 004 numbers invocations from 1).
   * A host that numbers invocations across a whole session (TJ-RUNSEM-009) passes its session counter here.
   */
  readonly firstLlmSeq?: number;
}

/**
 * Options of {@link openRunWriter}: either a store `root`, and the file is the recommended
 * `<root>/sessions/YYYY/MM/DD/<runId>.jsonl` (spec §4.4), or an explicit `file` path.
 */
export type OpenRunWriterOptions =
  | (RunWriterCommonOptions & {
      /** The store root; directories below it are created durably (TJ-DUR-008). */
      readonly root: string;
      /** Not with `root`. */
      readonly file?: undefined;
    })
  | (RunWriterCommonOptions & {
      /** The run file; its directory is created durably when missing. */
      readonly file: string;
      /** Not with `file`. */
      readonly root?: undefined;
    });

/** What {@link openRunWriter} found and did: {@link OpenReport} plus what it learnt about the run. */
export interface RunOpenReport extends OpenReport {
  /** True when the writer wrote the header (a new or empty file); false when the file already had its records. */
  readonly headerWritten: boolean;
  /** True when the file already held records of this run (a restarted process continuing it). */
  readonly resumed: boolean;
}

/** The acknowledgement of an `agent.event` or `llm.request`: where it was written and the `seq` it got. */
export interface SequencedAck extends AppendAck {
  /** The record's `seq`. */
  readonly seq: number;
}

/** Options every record method accepts. */
export interface RecordOptions {
  /** Extension data written as the record's `meta` (TJ-RUN-012). */
  readonly meta?: RunMeta;
}

/** The output of one tool call, for {@link RunWriter.toolOutput}. */
export interface ToolOutputInput extends RecordOptions {
  /** Tool name. */
  readonly tool: string;
  /** The call the output belongs to (`tool_call_id`). */
  readonly toolCallId: string;
  /** The full tool output (`result_raw`). */
  readonly resultRaw: string;
  /** Whether the call failed (`is_error`). */
  readonly isError?: boolean;
  /** A reference to output stored elsewhere (`output_ref`). */
  readonly outputRef?: { readonly id: string; readonly byteSize?: number; readonly lineCount?: number };
}

/** One model invocation's input, for {@link RunWriter.llmRequest}. */
export interface LlmRequestInput extends RecordOptions {
  /** The invocation number; by default the writer's counter (see {@link RunWriterCommonOptions.firstLlmSeq}). */
  readonly seq?: number;
  /** The model invoked. */
  readonly model?: RunModelInfo;
  /** What was sent, written as given (`messages` required; `tools`, `tool_choice`, `model` optional). */
  readonly input: {
    readonly messages: readonly RunMessage[];
    readonly tools?: readonly unknown[] | null;
    readonly tool_choice?: unknown;
    readonly model?: string;
    readonly [member: string]: unknown;
  };
}

/** Token usage of one invocation, as `llm.response.output.usage` carries it. */
export interface LlmUsage {
  /** Model that answered. */
  readonly model: string;
  /** Input tokens. */
  readonly input_tokens: number;
  /** Output tokens. */
  readonly output_tokens: number;
  /** Total tokens. */
  readonly total_tokens: number;
  /** Cached input tokens. */
  readonly input_cached_tokens?: number | null;
  /** Input tokens spent creating a cache entry. */
  readonly input_cache_creation_tokens?: number | null;
  /** Input tokens of images. */
  readonly input_image_tokens?: number | null;
  /** Further members are written as given. */
  readonly [member: string]: unknown;
}

/** One model invocation's output, for {@link RunWriter.llmResponse}. */
export interface LlmResponseInput extends RecordOptions {
  /** The `seq` of the open `llm.request` this answers (TJ-RUNSEM-011). */
  readonly seq: number;
  /** What the model returned, written as given (`messages` required). */
  readonly output: {
    readonly messages: readonly RunMessage[];
    readonly usage?: LlmUsage | null;
    readonly stop_reason?: string | null;
    readonly provider_meta?: unknown;
    readonly [member: string]: unknown;
  };
}

/** How the run ended, for {@link RunWriter.end}. */
export interface RunEndInput extends RecordOptions {
  /** `completed`, `cancelled`, `error`, or another string (open). */
  readonly outcome: string;
  /** The final answer. */
  readonly final?: string;
}

/** The error of a `run.error` record: `name` and `message`, optional `stack`, and any structured members. */
export interface RunErrorInput {
  /** Error name or class. */
  readonly name: string;
  /** Error message. */
  readonly message: string;
  /** Stack trace. */
  readonly stack?: string;
  /** Further members (structured provider errors) are written as given. */
  readonly [member: string]: unknown;
}

/** Record types that {@link RunWriter.append} refuses because a dedicated method keeps their invariants. */
const DEDICATED_TYPES: Readonly<Record<string, string>> = {
  header: 'openRunWriter (it writes the header once, TJ-RUN-004)',
  'agent.event': 'agentEvent()',
  'llm.request': 'llmRequest()',
  'llm.response': 'llmResponse()',
  'run.end': 'end()',
};

/** Types v1 defines whose records `append` validates against their own schema. */
const KNOWN_APPEND_TYPES = new Set(['run.start', 'run.context', 'tool.output', 'run.status', 'run.error']);

function headerRecord(runId: string, header: RunHeaderInput): Record<string, unknown> {
  if (typeof header !== 'object' || header === null)
    throw new WriterError('invalid_option', 'openRunWriter needs a `header` object with `startedAt`');
  const startedAt = toUtcTimestamp(header.startedAt, 'started_at');
  return {
    type: 'header',
    schema_version: 1,
    run_id: runId,
    ...optional('session_id', header.sessionId),
    started_at: startedAt.text,
    ...optional('client', header.client),
    ...optional('server', header.server),
    ...optional('model', header.model),
    ...optional('prompts', header.prompts),
    ...optional('tools', header.tools),
    ...optional('runtime', header.runtime),
    ...optional('meta', header.meta),
  };
}

function optional(key: string, value: unknown): Record<string, unknown> {
  return value === undefined ? {} : { [key]: value };
}

function requireSeq(seq: unknown, what: string, file: string): asserts seq is number {
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0)
    throw new WriterError('invalid_record', `${what} must be an integer >= 0, got ${String(seq)}`, file);
}

/**
 * Opens a run file for writing (spec §7, §11, §16), the per-run session store of seed 004.
 *
 * The run id is checked before any path is built (TJ-FAM-010) and the header before anything is created. With `root`
 * the file is `<root>/sessions/YYYY/MM/DD/<runId>.jsonl`, the UTC date of `header.startedAt` (spec §4.4); the
 * directories are created with a fsync of each new directory's parent (TJ-DUR-008). The file's lock is taken
 * (TJ-DUR-017) and a torn tail repaired (TJ-DUR-005).
 *
 * A new (or empty) file gets the header as its first record before this resolves (TJ-RUN-003). An existing file is a
 * run being continued by a restarted process: it is read back so that no second header is written (TJ-RUN-004),
 * `agent.event` numbering continues after the highest `seq` in the file, `llm.request` numbering after the highest
 * request `seq`, open requests can still be answered, and a run that already has `run.end` refuses every append
 * (`run_ended`). Opening is refused (`invalid_option`), and the file left untouched, when the file belongs to another
 * run (its header, or without one its first record, names another run id), to another family, or declares a
 * `schema_version` this writer does not write.
 */
export async function openRunWriter(options: OpenRunWriterOptions): Promise<RunWriter> {
  if (typeof options !== 'object' || options === null)
    throw new WriterError('invalid_option', 'openRunWriter needs an options object');
  requireIdentifier(options.runId, 'run id');
  const header = headerRecord(options.runId, options.header);
  const durability = options.durability ?? 'every';
  if (!DURABILITY_MODES.includes(durability))
    throw new WriterError('invalid_option', `unknown durability mode "${String(durability)}"`);
  const firstLlmSeq = options.firstLlmSeq ?? 1;
  if (!Number.isSafeInteger(firstLlmSeq) || firstLlmSeq < 0)
    throw new WriterError('invalid_option', `firstLlmSeq must be an integer >= 0, got ${String(firstLlmSeq)}`);
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  let path: string;
  if (options.root !== undefined && options.file === undefined) {
    if (typeof options.root !== 'string' || options.root.length === 0)
      throw new WriterError('invalid_option', 'the store root must be a non-empty path');
    path = runFilePath(options.root, options.runId, options.header.startedAt);
  } else if (options.file !== undefined && options.root === undefined && typeof options.file === 'string') {
    if (options.file.length === 0) throw new WriterError('invalid_option', 'the run file path is empty');
    path = options.file;
  } else throw new WriterError('invalid_option', 'openRunWriter needs exactly one of `root` and `file`');
  // Validate the header as it will be written before the first directory is created.
  const headerBytes = encodeRunRecord(header, 'header', maxLineBytes, path);

  const fs = options.fs ?? nodeFileSystem;
  await ensureDirectory(fs, dirname(path));
  const file = await AppendFile.open(path, {
    durability,
    fs,
    maxLineBytes,
    ...(options.lock === undefined ? {} : { lock: options.lock }),
  });
  try {
    const existing = await readExistingRun(path, file.source, maxLineBytes);
    if (existing.family !== undefined && existing.family !== 'run')
      throw new WriterError('invalid_option', `${path} holds ${existing.family} records, not a run`, path);
    if (existing.unsupportedVersion !== undefined)
      throw new WriterError(
        'invalid_option',
        `${path} declares schema_version ${existing.unsupportedVersion}; this writer writes version 1 only`,
        path,
      );
    if (existing.runId !== undefined && existing.runId !== options.runId)
      throw new WriterError(
        'invalid_option',
        `${path} belongs to run ${JSON.stringify(existing.runId)}, not ${JSON.stringify(options.runId)}`,
        path,
      );
    const resumed = existing.runId !== undefined;
    if (!resumed) await file.appendLine(headerBytes);
    const writtenHeader = resumed ? existing.header : (header as RunHeader);
    const report: RunOpenReport = { ...file.opened, headerWritten: !resumed, resumed };
    let nextLlmSeq = firstLlmSeq;
    for (const seq of existing.requestSeqs) nextLlmSeq = Math.max(nextLlmSeq, seq + 1);
    return new RunWriter(file, options.runId, options.clock ?? Date.now, maxLineBytes, report, writtenHeader, {
      ended: existing.ended,
      lastAgentSeq: existing.lastAgentSeq,
      requestSeqs: new Set(existing.requestSeqs),
      openRequests: new Set(existing.openRequests),
      nextLlmSeq,
      findings: existing.findings,
    });
  } catch (error) {
    await file.close().catch(() => undefined);
    throw error;
  }
}

/**
 * The writer of one run file (seed 004, spec §7, §16). Every method stamps `ts` (RFC 3339 UTC from the clock,
 * TJ-FAM-021), builds one record, validates it as it will be written (TJ-COMPAT-018), appends it, and resolves once
 * the durability mode acknowledges it. Calls may overlap; records are written in call order (TJ-DUR-006), and the
 * run's bookkeeping (`seq` counters, open requests, the end) is reserved when a method is called, so overlapping calls
 * are checked against each other. A call rejected by a check writes nothing.
 *
 * Invariants the writer keeps, so that a reader derives exactly what was written with no findings:
 * - one header, first (TJ-RUN-003, TJ-RUN-004);
 * - `agent.event` `seq` increasing from 0 (TJ-RUNSEM-010); an explicit `seq` not greater than the previous is refused
 *   (`illegal_transition`), because the reader would report `agent_event_seq_regression`;
 * - every `llm.response` answers an open `llm.request` of the same `seq` (TJ-RUNSEM-011); a response with no open
 *   request, or a second request with a used `seq`, is refused (`illegal_transition`), because the reader would report
 *   `unpaired_llm_response` or `seq_duplicate`;
 * - nothing after `run.end` (TJ-RUNSEM-002): every later call, a second `end()` included, rejects with `run_ended`.
 *
 * Errors of the file (`write_failed`, `writer_poisoned` after a failed sync, `writer_closed`) come from
 * {@link AppendFile}. After a failed write the reserved `seq` is given back; after a failed sync the writer refuses
 * everything until it is reopened, and the reopen reads back whatever reached the file.
 */
export class RunWriter {
  /** The run. */
  readonly runId: string;
  /** What opening found and did. */
  readonly opened: RunOpenReport;
  /** The file's header: the one written, or the one found on reopen (undefined for a file that has none). */
  readonly header: RunHeader | undefined;
  /** Findings about lines already in the file when it was opened (mid-file damage is left in place and reported). */
  readonly findings: readonly Finding[];
  readonly #file: AppendFile;
  readonly #clock: () => number;
  readonly #maxLineBytes: number;
  readonly #state: RunState;
  #closed = false;

  /** @internal use {@link openRunWriter}. */
  constructor(
    file: AppendFile,
    runId: string,
    clock: () => number,
    maxLineBytes: number,
    opened: RunOpenReport,
    header: RunHeader | undefined,
    state: RunState,
  ) {
    this.#file = file;
    this.runId = runId;
    this.#clock = clock;
    this.#maxLineBytes = maxLineBytes;
    this.opened = opened;
    this.header = header;
    this.#state = state;
    this.findings = state.findings;
  }

  /** The run file. */
  get path(): string {
    return this.#file.path;
  }

  /** The durability mode in force (TJ-DUR-013). */
  get durability(): Durability {
    return this.#file.durability;
  }

  /** True once `run.end` is written (or was found on reopen), or while it is being written. */
  get ended(): boolean {
    return this.#state.ended;
  }

  /** The highest `agent.event` `seq` written or reserved, if any. */
  get lastAgentSeq(): number | undefined {
    return this.#state.lastAgentSeq;
  }

  /** The `seq` the next `llm.request` gets when the caller does not give one. */
  get nextLlmSeq(): number {
    return this.#state.nextLlmSeq;
  }

  /** The `seq` values of `llm.request` records that have no `llm.response` yet, ascending. */
  get openLlmRequests(): number[] {
    return [...this.#state.openRequests].sort((a, b) => a - b);
  }

  /** `run.start`: the run's input; a string is shorthand for `{type: "text", text}` (TJ-RUN-007). */
  runStart(
    input: string | { readonly type: string; readonly [member: string]: unknown },
    options: RecordOptions & { readonly sessionId?: string; readonly uiContext?: unknown } = {},
  ): Promise<AppendAck> {
    return this.#guarded(() => {
      const value = typeof input === 'string' ? { type: 'text', text: input } : input;
      return this.#simple('run.start', {
        ...optional('session_id', options.sessionId),
        input: value,
        ...optional('ui_context', options.uiContext),
        ...optional('meta', options.meta),
      });
    });
  }

  /** `run.context`: the share of the model context window left, in percent. */
  context(contextLeftPercent: number, options: RecordOptions = {}): Promise<AppendAck> {
    return this.#guarded(() => {
      if (typeof contextLeftPercent !== 'number' || !Number.isFinite(contextLeftPercent))
        throw new WriterError('invalid_record', 'context_left_percent must be a finite number', this.path);
      return this.#simple('run.context', {
        context_left_percent: contextLeftPercent,
        ...optional('meta', options.meta),
      });
    });
  }

  /**
   * `agent.event`: a UI playback event (an object with a string `type`, TJ-RUN-008). The writer numbers events from
   * 0 in each run (TJ-RUNSEM-010), one more than the previous; an explicit `seq` must be greater than the previous
   * (gaps are allowed, TJ-RUNSEM-008), else the call is refused with `illegal_transition`.
   */
  agentEvent(
    event: { readonly type: string; readonly [member: string]: unknown },
    options: RecordOptions & { readonly seq?: number } = {},
  ): Promise<SequencedAck> {
    return this.#guarded(async () => {
      const state = this.#state;
      const previous = state.lastAgentSeq;
      const seq = options.seq ?? (previous === undefined ? 0 : previous + 1);
      requireSeq(seq, 'agent.event seq', this.path);
      if (previous !== undefined && seq <= previous)
        throw new WriterError(
          'illegal_transition',
          `agent.event seq ${seq} is not greater than the previous seq ${previous} (agent_event_seq_regression, TJ-RUNSEM-007)`,
          this.path,
        );
      const bytes = this.#encode('agent.event', { seq, event, ...optional('meta', options.meta) });
      state.lastAgentSeq = seq;
      try {
        return { ...(await this.#file.appendLine(bytes)), seq };
      } catch (error) {
        // Give the seq back unless a later call already took a higher one (then the failed one is just a gap).
        if (state.lastAgentSeq === seq) state.lastAgentSeq = previous;
        throw error;
      }
    });
  }

  /** `tool.output`: the full output of one tool call. */
  toolOutput(input: ToolOutputInput): Promise<AppendAck> {
    return this.#guarded(() => {
      if (typeof input !== 'object' || input === null)
        throw new WriterError('invalid_record', 'toolOutput needs an object', this.path);
      const ref = input.outputRef;
      return this.#simple('tool.output', {
        tool: input.tool,
        tool_call_id: input.toolCallId,
        result_raw: input.resultRaw,
        ...optional('is_error', input.isError),
        ...(ref === undefined
          ? {}
          : {
              output_ref: {
                id: ref.id,
                ...optional('byte_size', ref.byteSize),
                ...optional('line_count', ref.lineCount),
              },
            }),
        ...optional('meta', input.meta),
      });
    });
  }

  /**
   * `llm.request`: one model invocation (TJ-RUN-009). Without `seq` the writer's counter numbers it (from
   * `firstLlmSeq`, then one more than the highest request `seq` so far); an explicit `seq` may be any unused integer
   * >= 0 (a session-wide counter, TJ-RUNSEM-009), and the counter continues after it. A `seq` already used by a request
   * of this run is refused with `illegal_transition` (`seq_duplicate`, TJ-RUNSEM-006). The request stays open until
   * {@link RunWriter.llmResponse} answers it.
   */
  llmRequest(request: LlmRequestInput): Promise<SequencedAck> {
    return this.#guarded(async () => {
      if (typeof request !== 'object' || request === null)
        throw new WriterError('invalid_record', 'llmRequest needs an object', this.path);
      const state = this.#state;
      const seq = request.seq ?? state.nextLlmSeq;
      requireSeq(seq, 'llm.request seq', this.path);
      if (state.requestSeqs.has(seq))
        throw new WriterError(
          'illegal_transition',
          `an llm.request with seq ${seq} was already written in this run (seq_duplicate, TJ-RUNSEM-006)`,
          this.path,
        );
      const bytes = this.#encode('llm.request', {
        seq,
        ...optional('model', request.model),
        input: request.input,
        ...optional('meta', request.meta),
      });
      const nextBefore = state.nextLlmSeq;
      state.requestSeqs.add(seq);
      state.openRequests.add(seq);
      state.nextLlmSeq = Math.max(nextBefore, seq + 1);
      try {
        return { ...(await this.#file.appendLine(bytes)), seq };
      } catch (error) {
        state.requestSeqs.delete(seq);
        state.openRequests.delete(seq);
        if (state.nextLlmSeq === seq + 1) state.nextLlmSeq = nextBefore;
        throw error;
      }
    });
  }

  /**
   * `llm.response`: the answer to the open `llm.request` of the same `seq` (TJ-RUNSEM-011, TJ-RUN-010). A response
   * without an open request (never requested, or already answered) is refused with `illegal_transition`: the reader
   * would report it as `unpaired_llm_response` (TJ-RUNSEM-005). A host that got a response to a request it never
   * recorded should record the request first.
   */
  llmResponse(response: LlmResponseInput): Promise<AppendAck> {
    return this.#guarded(async () => {
      if (typeof response !== 'object' || response === null)
        throw new WriterError('invalid_record', 'llmResponse needs an object', this.path);
      const state = this.#state;
      const seq = response.seq;
      requireSeq(seq, 'llm.response seq', this.path);
      if (!state.openRequests.has(seq))
        throw new WriterError(
          'illegal_transition',
          state.requestSeqs.has(seq)
            ? `the llm.request with seq ${seq} is already answered (unpaired_llm_response, TJ-RUNSEM-005)`
            : `no llm.request with seq ${seq} was written in this run (unpaired_llm_response, TJ-RUNSEM-005)`,
          this.path,
        );
      const bytes = this.#encode('llm.response', {
        seq,
        output: response.output,
        ...optional('meta', response.meta),
      });
      state.openRequests.delete(seq);
      try {
        return await this.#file.appendLine(bytes);
      } catch (error) {
        state.openRequests.add(seq);
        throw error;
      }
    });
  }

  /** `run.status`: a status change (`running`, `awaiting_ui`, `completed`, `error`, `cancelled`, or another string). */
  status(status: string, options: RecordOptions & { readonly message?: string } = {}): Promise<AppendAck> {
    return this.#guarded(() =>
      this.#simple('run.status', {
        status,
        ...optional('message', options.message),
        ...optional('meta', options.meta),
      }),
    );
  }

  /** `run.error`: an error during the run; structured members of `error` are kept. It does not end the run. */
  error(error: RunErrorInput, options: RecordOptions = {}): Promise<AppendAck> {
    return this.#guarded(() => this.#simple('run.error', { error, ...optional('meta', options.meta) }));
  }

  /**
   * `run.end`: the last record of the run (TJ-RUN-011); its `outcome` is the run's outcome (TJ-RUNSEM-001). Once it is
   * called, every later call (a second `end()` included) rejects with `run_ended` and writes nothing (TJ-RUNSEM-002).
   * If the write itself fails, the run is open again and `end()` may be retried.
   */
  end(input: RunEndInput): Promise<AppendAck> {
    return this.#guarded(async () => {
      if (typeof input !== 'object' || input === null)
        throw new WriterError('invalid_record', 'end needs an object with `outcome`', this.path);
      const bytes = this.#encode('run.end', {
        outcome: input.outcome,
        ...optional('final', input.final),
        ...optional('meta', input.meta),
      });
      this.#state.ended = true;
      try {
        return await this.#file.appendLine(bytes);
      } catch (error) {
        this.#state.ended = false;
        throw error;
      }
    });
  }

  /**
   * Appends a record of any other type: `x.<org>.<name>` extensions (TJ-COMPAT-007) or a type a later version
   * defines. The writer adds `type`, `run_id` (which keeps it in the run family, TJ-COMPAT-008) and `ts`; `fields` may
   * not redefine them. A type v1 defines is validated against its schema; `header`, `agent.event`, `llm.request`,
   * `llm.response` and `run.end` are refused (`invalid_record`) because their methods keep the run's invariants, and so
   * is a type of another family.
   */
  append(type: string, fields: Readonly<Record<string, unknown>> = {}): Promise<AppendAck> {
    return this.#guarded(() => {
      if (typeof type !== 'string' || type.length === 0)
        throw new WriterError('invalid_record', 'a record type must be a non-empty string', this.path);
      const dedicated = DEDICATED_TYPES[type];
      if (dedicated !== undefined)
        throw new WriterError('invalid_record', `write "${type}" records with ${dedicated}`, this.path);
      if (typeof fields !== 'object' || fields === null || Array.isArray(fields))
        throw new WriterError('invalid_record', 'record fields must be an object', this.path);
      for (const key of ['type', 'run_id', 'ts'])
        if (Object.hasOwn(fields, key))
          throw new WriterError('invalid_record', `the writer sets "${key}"; fields may not redefine it`, this.path);
      return this.#simple(type, fields, KNOWN_APPEND_TYPES.has(type));
    });
  }

  /** Waits for pending appends, then closes the file and releases its lock (TJ-DUR-015 in `none` mode). */
  close(): Promise<void> {
    this.#closed = true;
    return this.#file.close();
  }

  /** Runs a method body after the checks every call shares; any throw becomes a rejection. */
  #guarded<T>(body: () => Promise<T>): Promise<T> {
    try {
      if (this.#closed) throw new WriterError('writer_closed', `${this.path} is closed`, this.path);
      if (this.#state.ended)
        throw new WriterError(
          'run_ended',
          `run ${this.runId} has ended (run.end is written); nothing may follow it (record_after_run_end, TJ-RUNSEM-002)`,
          this.path,
        );
      return body();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  #encode(type: string, fields: Readonly<Record<string, unknown>>, known = true): Uint8Array {
    const now = new Date(this.#clock());
    if (!Number.isFinite(now.getTime()))
      throw new WriterError('invalid_option', 'the clock returned an invalid time', this.path);
    const record = { type, run_id: this.runId, ts: now.toISOString(), ...fields };
    return encodeRunRecord(record, known ? type : undefined, this.#maxLineBytes, this.path);
  }

  #simple(type: string, fields: Readonly<Record<string, unknown>>, known = true): Promise<AppendAck> {
    return this.#file.appendLine(this.#encode(type, fields, known));
  }
}
