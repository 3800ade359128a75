/**
 * The live committed message as the figures sample it: `run.toolResult()` awaited (`tool.result` and its
 * `message_append`, durable before it resolves), one sample of it and of every other series per message in an order
 * shuffled afresh each time, every other series storing the bytes the hub's previous message added to its log.
 */
import { closeSync, constants, fdatasync, fdatasyncSync, openSync, readSync, statSync, writeSync } from 'node:fs';
import { ShuffledSamples } from './order.js';

/**
 * Where the lines of an open journal end: its size less the pre-allocated space after its last line (spec §3.8; at
 * most 64 KiB, TJ-DUR-035), which a flushed live event log keeps, so the file size alone overstates what was written.
 */
export function linesEnd(file: string): number {
  const size = statSync(file).size;
  const tail = Buffer.alloc(Math.min(size, 128 * 1024));
  const fd = openSync(file, 'r');
  try {
    readSync(fd, tail, 0, tail.length, size - tail.length);
  } finally {
    closeSync(fd);
  }
  return size - tail.length + tail.lastIndexOf(0x0a) + 1;
}

/**
 * Follows where the lines of a journal the hub is writing end, from message to message, without changing what the
 * hub's next sync costs. `linesEnd` did that with a `stat` and a read of the file before each timed call, and both
 * made the hub's sync dearer, not the floor's (whose file nobody looks at): on Linux 6.18, ext4, `relatime`, a
 * committed message cost more after a `stat` or a read of the hub's file, and no more after a read with `O_NOATIME`
 * and no `stat` (bench/results/history.md, "The live committed message: what the figure measured"). The likely
 * mechanism, not traced in the kernel: a read after a write updates the access time, and since Linux 6.13 a `stat`
 * makes the next write take a fine-grained modification time; either way the write dirties the inode, and the
 * `fdatasync` that a write into pre-allocated space (spec §11.6) gets cheaply then costs what an appending one does.
 * So this reads forward from the last known end, through a descriptor opened once with `O_NOATIME`, up to the first
 * NUL byte (where the pre-allocated space starts: a line never holds one, JSON escapes it) or the file's end.
 */
export class LinesFollower {
  readonly #fd: number;
  readonly #chunk = Buffer.alloc(4096);
  #end: number;

  constructor(file: string) {
    // The one `stat`, before the first (untimed) message.
    this.#end = linesEnd(file);
    this.#fd = openSync(file, constants.O_RDONLY | (constants.O_NOATIME ?? 0));
  }

  /** Where the lines end now. */
  next(): number {
    let position = this.#end;
    for (;;) {
      const got = readSync(this.#fd, this.#chunk, 0, this.#chunk.length, position);
      const data = this.#chunk.subarray(0, got);
      const nul = data.indexOf(0);
      const lines = nul < 0 ? data : data.subarray(0, nul);
      const lf = lines.lastIndexOf(0x0a);
      if (lf >= 0) this.#end = position + lf + 1;
      if (nul >= 0 || got < this.#chunk.length) return this.#end;
      position += got;
    }
  }

  close(): void {
    closeSync(this.#fd);
  }
}

/** The bytes a message added to the hub's log, as a line (with its LF) and as text (without). */
export interface MessageBytes {
  readonly line: Buffer;
  readonly text: string;
}

/** A series sampled beside the hub: stores `message` once per call, resolving when it is durable. */
export type MessageSeries = (message: MessageBytes) => unknown;

/** The samples of {@link sampleCommittedMessages}: the hub's, each other series' (in order), and the message size. */
export interface CommittedSamples {
  readonly hub: number[];
  readonly others: number[][];
  readonly messageBytes: number;
  /**
   * The same, for the first messages after the hub started (after the first {@link FIRST_UNTIMED}, at most as many as
   * the samples): what a process that has just started pays while V8 still compiles its code.
   */
  readonly afterStart: { readonly hub: number[]; readonly others: number[][] };
}

/** Messages never sampled: the first, sent before any size is known. */
const FIRST_UNTIMED = 10;

/**
 * Untimed messages before the samples of a full run. V8 compiles a function with its optimising compiler only after
 * many calls, on a second thread, and a committed message runs a few hundred functions once or twice each: in the
 * first thousand messages of a hub they were still being compiled, taking the second of the machine's two cores, and
 * the samples taken meanwhile measured that (bench/results/history.md, "The committed message and the compiler").
 * Some events of a hub's life come later still: its window of recent records (`RecordRing`, 4,096 records by default)
 * fills after about two thousand messages of two records, and its first evictions throw away code compiled without
 * them, compiled again a few hundred messages on; a few functions of the write path are first compiled after that
 * (bench/results/history.md, "The committed message's p99 and the compiler"). The figures measure a process past
 * these, and report the first messages apart ({@link CommittedSamples.afterStart}).
 */
export const FULL_WARM_UP = 5000;

/** The warm-up of a quick run, which only proves the harness (and samples a few messages after the start). */
export const QUICK_WARM_UP = 3 * FIRST_UNTIMED;

/**
 * `messages` awaited `run.toolResult()` calls after `warmUp` untimed ones, each sampled with every series of `others`
 * in a shuffled order; each series stores as many bytes as the hub's previous message added to `file`, found by a
 * {@link LinesFollower}, which leaves the hub's syncs as they are. Ids and outputs are of fixed width, so every message
 * adds the same count, but for the rare one the writer follows with a checkpoint (TJ-EVENT-007), whose bytes the next
 * sample of the others then stores too.
 */
export async function sampleCommittedMessages(
  run: { toolResult(input: { toolCallId: string; output: string }): Promise<void> },
  file: string,
  messages: number,
  others: readonly MessageSeries[],
  warmUp: number = QUICK_WARM_UP,
): Promise<CommittedSamples> {
  if (!Number.isInteger(warmUp) || warmUp < FIRST_UNTIMED)
    throw new RangeError(`warm-up must be an integer of at least ${FIRST_UNTIMED}: ${warmUp}`);
  const total = warmUp + messages;
  // Every message is timed and kept the same way, untimed ones too, and cut into the start and the samples afterwards:
  // a loop whose body changed at the end of the warm-up had V8 discard its compiled code there and compile it again
  // on the second core while the samples were being taken (bench/results/history.md, "The committed message's p99
  // and the compiler").
  const hub = new Array<number>(total).fill(0);
  const samples = others.map(() => new Array<number>(total).fill(0));
  const step = new MessageStep(run, file, others, hub, samples);
  try {
    for (let i = 0; i < total; i += 1) await step.sample(i);
  } finally {
    step.close();
  }
  const startEnd = Math.min(warmUp, FIRST_UNTIMED + messages);
  return {
    hub: hub.slice(warmUp),
    others: samples.map((series) => series.slice(warmUp)),
    messageBytes: step.messageBytes,
    afterStart: {
      hub: hub.slice(FIRST_UNTIMED, startEnd),
      others: samples.map((series) => series.slice(FIRST_UNTIMED, startEnd)),
    },
  };
}

/** One message of {@link sampleCommittedMessages}: its samples, kept at its index, and the bytes it added. */
class MessageStep {
  readonly #run: { toolResult(input: { toolCallId: string; output: string }): Promise<void> };
  readonly #others: readonly MessageSeries[];
  readonly #hub: number[];
  readonly #samples: number[][];
  readonly #lines: LinesFollower;
  // One sample of each series per message, in an order shuffled afresh each time (`ShuffledSamples`), so neither the
  // disk's drift nor the place in the loop favours one of them.
  readonly #shuffled: ShuffledSamples;
  #before: number;
  #message = bytesOf(1);
  messageBytes = 0;

  constructor(
    run: { toolResult(input: { toolCallId: string; output: string }): Promise<void> },
    file: string,
    others: readonly MessageSeries[],
    hub: number[],
    samples: number[][],
  ) {
    this.#run = run;
    this.#others = others;
    this.#hub = hub;
    this.#samples = samples;
    this.#lines = new LinesFollower(file);
    this.#before = this.#lines.next();
    this.#shuffled = new ShuffledSamples(others.length + 1);
  }

  async sample(i: number): Promise<void> {
    const id = String(i).padStart(6, '0');
    const current = this.#message;
    const series: (() => unknown)[] = [
      () => this.#run.toolResult({ toolCallId: `c${id}`, output: `result ${id}: ${'y'.repeat(200)}` }),
      ...this.#others.map((other) => () => other(current)),
    ];
    const durations = await this.#shuffled.sample(series);
    this.#hub[i] = durations[0] as number;
    for (let k = 0; k < this.#samples.length; k += 1) (this.#samples[k] as number[])[i] = durations[k + 1] as number;
    const after = this.#lines.next();
    this.messageBytes = after - this.#before;
    this.#before = after;
    if (this.#message.line.length !== this.messageBytes) this.#message = bytesOf(this.messageBytes);
  }

  close(): void {
    this.#lines.close();
  }
}

function bytesOf(length: number): MessageBytes {
  const line = Buffer.alloc(length, 0x61);
  line[length - 1] = 0x0a;
  return { line, text: 'a'.repeat(length - 1) };
}

/** A file the floors append to, opened once; `close` when done. */
export interface FloorFile {
  /** `writeSync` of the message, then `fdatasyncSync`: the durable append floor. */
  readonly durable: MessageSeries;
  /** `writeSync` of the message, then `fdatasync` through libuv's thread pool, awaited: the non-blocking floor. */
  readonly nonBlocking: MessageSeries;
  close(): void;
}

/** Opens `path` for appending as the floors' file. */
export function openFloorFile(path: string): FloorFile {
  const fd = openSync(path, 'a');
  return {
    durable: ({ line }) => {
      writeSync(fd, line);
      fdatasyncSync(fd);
    },
    nonBlocking: ({ line }) => {
      writeSync(fd, line);
      return new Promise<void>((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve())));
    },
    close: () => closeSync(fd),
  };
}
