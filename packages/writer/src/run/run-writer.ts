import type { WritableJournal } from '@turnjournal/reader/record-store';
import type { Finding, RunHeader } from '@turnjournal/schema';
import type { AppendAck, Durability } from '../append/append-file.js';
import { JournalAppender } from '../append/journal-appender.js';
import { WriterError } from '../errors.js';
import { encodeRunRecord, optional, recordOptions, requireSeq } from './encode-run-record.js';
import { type RunState, readExistingRun, runStateOf } from './read-existing-run.js';
import type {
  LlmRequestInput,
  LlmResponseInput,
  RecordOptions,
  RunEndInput,
  RunErrorInput,
  RunOpenReport,
  SequencedAck,
  ToolOutputInput,
} from './run-inputs.js';

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
 * journal (an `AppendFile`, or any record store's). After a failed write the calls queued behind it are refused (`append_cancelled`) and the writer
 * re-reads its bookkeeping from the file, so the failed `seq` is free again (TJ-DUR-030); after a failed sync the
 * writer refuses everything until it is reopened, and the reopen reads back whatever reached the file.
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
  readonly #file: WritableJournal;
  /** Checks, reserves and appends in call order; re-reads the file after a failed write (TJ-DUR-030). */
  readonly #appender: JournalAppender;
  readonly #clock: () => number;
  readonly #maxLineBytes: number;
  readonly #firstLlmSeq: number;
  readonly #state: RunState;

  /** @internal use {@link openRunWriter}. */
  constructor(
    file: WritableJournal,
    runId: string,
    clock: () => number,
    maxLineBytes: number,
    firstLlmSeq: number,
    opened: RunOpenReport,
    header: RunHeader | undefined,
    state: RunState,
  ) {
    this.#file = file;
    this.#appender = new JournalAppender(file, () => this.#reread());
    this.#firstLlmSeq = firstLlmSeq;
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
    return this.#file.name;
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
    return this.#rejecting(() => {
      const value = typeof input === 'string' ? { type: 'text', text: input } : input;
      return this.#simple('run.start', {
        ...optional('session_id', options.sessionId),
        input: value,
        ...optional('ui_context', options.uiContext),
        ...recordOptions(options, this.path),
      });
    });
  }

  /** `run.context`: the share of the model context window left, in percent. */
  context(contextLeftPercent: number, options: RecordOptions = {}): Promise<AppendAck> {
    return this.#rejecting(() => {
      if (typeof contextLeftPercent !== 'number' || !Number.isFinite(contextLeftPercent))
        throw new WriterError('invalid_record', 'context_left_percent must be a finite number', this.path);
      return this.#simple('run.context', {
        context_left_percent: contextLeftPercent,
        ...recordOptions(options, this.path),
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
    let seq = 0;
    return this.#record(() => {
      const state = this.#state;
      const previous = state.lastAgentSeq;
      seq = options.seq ?? (previous === undefined ? 0 : previous + 1);
      requireSeq(seq, 'agent.event seq', this.path);
      if (previous !== undefined && seq <= previous)
        throw new WriterError(
          'illegal_transition',
          `agent.event seq ${seq} is not greater than the previous seq ${previous} (agent_event_seq_regression, TJ-RUNSEM-007)`,
          this.path,
        );
      const bytes = this.#encode('agent.event', { seq, event, ...recordOptions(options, this.path) });
      state.lastAgentSeq = seq;
      return bytes;
    }).then((ack) => ({ ...ack, seq }));
  }

  /** `tool.output`: the full output of one tool call. */
  toolOutput(input: ToolOutputInput): Promise<AppendAck> {
    return this.#rejecting(() => {
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
        ...recordOptions(input, this.path),
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
    let seq = 0;
    return this.#record(() => {
      if (typeof request !== 'object' || request === null)
        throw new WriterError('invalid_record', 'llmRequest needs an object', this.path);
      const state = this.#state;
      seq = request.seq ?? state.nextLlmSeq;
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
        ...recordOptions(request, this.path),
      });
      state.requestSeqs.add(seq);
      state.openRequests.add(seq);
      state.nextLlmSeq = Math.max(state.nextLlmSeq, seq + 1);
      return bytes;
    }).then((ack) => ({ ...ack, seq }));
  }

  /**
   * `llm.response`: the answer to the open `llm.request` of the same `seq` (TJ-RUNSEM-011, TJ-RUN-010). A response
   * without an open request (never requested, or already answered) is refused with `illegal_transition`: the reader
   * would report it as `unpaired_llm_response` (TJ-RUNSEM-005). A host that got a response to a request it never
   * recorded should record the request first.
   */
  llmResponse(response: LlmResponseInput): Promise<AppendAck> {
    return this.#record(() => {
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
        ...recordOptions(response, this.path),
      });
      state.openRequests.delete(seq);
      return bytes;
    });
  }

  /** `run.status`: a status change (`running`, `awaiting_ui`, `completed`, `error`, `cancelled`, or another string). */
  status(status: string, options: RecordOptions & { readonly message?: string } = {}): Promise<AppendAck> {
    return this.#rejecting(() =>
      this.#simple('run.status', {
        status,
        ...optional('message', options.message),
        ...recordOptions(options, this.path),
      }),
    );
  }

  /** `run.error`: an error during the run; structured members of `error` are kept. It does not end the run. */
  error(error: RunErrorInput, options: RecordOptions = {}): Promise<AppendAck> {
    return this.#rejecting(() => this.#simple('run.error', { error, ...recordOptions(options, this.path) }));
  }

  /**
   * `run.end`: the last record of the run (TJ-RUN-011); its `outcome` is the run's outcome (TJ-RUNSEM-001). Once it is
   * called, every later call (a second `end()` included) rejects with `run_ended` and writes nothing (TJ-RUNSEM-002).
   * If the write itself fails, the run is open again and `end()` may be retried.
   */
  end(input: RunEndInput): Promise<AppendAck> {
    return this.#record(() => {
      if (typeof input !== 'object' || input === null)
        throw new WriterError('invalid_record', 'end needs an object with `outcome`', this.path);
      const bytes = this.#encode('run.end', {
        outcome: input.outcome,
        ...optional('final', input.final),
        ...recordOptions(input, this.path),
      });
      this.#state.ended = true;
      return bytes;
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
    return this.#rejecting(() => {
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

  /**
   * Waits for pending appends, then closes the file and releases its lock (TJ-DUR-015 in `none` mode); overlapping
   * calls close it once.
   */
  close(): Promise<void> {
    return this.#appender.close();
  }

  /**
   * Reserves, encodes and appends one record through the writer's {@link JournalAppender}: `prepare` checks the call
   * against the run's state in call order (nothing after `run.end`, TJ-RUNSEM-002), reserves its bookkeeping and
   * returns the encoded line; any throw becomes a rejection and writes nothing.
   */
  /** Runs a method's input checks; any throw becomes a rejection. */
  #rejecting<T>(body: () => Promise<T>): Promise<T> {
    try {
      return body();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  #record(prepare: () => Uint8Array): Promise<AppendAck> {
    return this.#appender
      .append(() => {
        if (this.#state.ended)
          throw new WriterError(
            'run_ended',
            `run ${this.runId} has ended (run.end is written); nothing may follow it (record_after_run_end, TJ-RUNSEM-002)`,
            this.path,
          );
        return prepare();
      })
      .then((ack) => ack as AppendAck);
  }

  /** Encodes a run record as it will be written, checked by the one writer encoder (TJ-COMPAT-018). */
  #encode(type: string, fields: Readonly<Record<string, unknown>>, known = true): Uint8Array {
    const now = new Date(this.#clock());
    if (!Number.isFinite(now.getTime()))
      throw new WriterError('invalid_option', 'the clock returned an invalid time', this.path);
    const record = { type, run_id: this.runId, ts: now.toISOString(), ...fields };
    return encodeRunRecord(record, type, known, this.#maxLineBytes, this.path);
  }

  #simple(type: string, fields: Readonly<Record<string, unknown>>, known = true): Promise<AppendAck> {
    return this.#record(() => this.#encode(type, fields, known));
  }

  /** After a failed write (TJ-DUR-030): the run's bookkeeping follows the file again. */
  async #reread(): Promise<void> {
    const existing = await readExistingRun(this.path, this.#file.reader(), this.#maxLineBytes);
    const state = runStateOf(existing, this.#firstLlmSeq);
    Object.assign(this.#state, { ended: state.ended, lastAgentSeq: state.lastAgentSeq, nextLlmSeq: state.nextLlmSeq });
    replaceSet(this.#state.requestSeqs, state.requestSeqs);
    replaceSet(this.#state.openRequests, state.openRequests);
  }
}

function replaceSet<T>(target: Set<T>, source: ReadonlySet<T>): void {
  target.clear();
  for (const value of source) target.add(value);
}
