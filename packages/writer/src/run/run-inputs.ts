import type { RecordStore } from '@turnjournal/reader/record-store';
import type { AppendAck, Durability, OpenReport } from '../append/append-file.js';
import type { FileSystem } from '../fs/file-system.js';
import type { AcquireLockOptions } from '../fs/lock.js';

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
      /** Not with `root`. */
      readonly store?: undefined;
    })
  | (RunWriterCommonOptions & {
      /** The run file; its directory is created durably when missing. */
      readonly file: string;
      /** Not with `file`. */
      readonly root?: undefined;
      /** Not with `file`. */
      readonly store?: undefined;
    })
  | (RunWriterCommonOptions & {
      /**
       * A record store (spec §19): the run is its journal at `{ family: 'run', runId, date }`, dated by the UTC date of
       * `header.startedAt` as the layout dates run files (spec §4.4). `fs` and `lock` are then the store's business.
       */
      readonly store: RecordStore;
      /** Not with `store`. */
      readonly root?: undefined;
      /** Not with `store`. */
      readonly file?: undefined;
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
  /**
   * When the host observed what the record describes, written as its `ts` in UTC instead of the time of writing
   * (TJ-RUN-020; such times may be out of order in a file, and readers derive nothing from them).
   */
  readonly ts?: Date;
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
