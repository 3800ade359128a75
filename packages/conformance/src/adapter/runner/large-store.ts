import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { StoreFixtureCase } from '../../fixtures/fixture-file.js';

// A store whose files are large while what a reader derives from them stays small: the bulk is what a fold reads and
// forgets (stream text of closed segments, agent events, extension records). A reader that streams (TJ-FRAME-033) reads
// it in memory that does not follow the file size; one that holds what it read does not.

/** The JSONL families a large store can hold. */
export type LargeFamily = 'turn' | 'event' | 'run';

/**
 * The size of the records that make up a large store's bulk: `bulky` records of 600 bytes to 4 KiB, or `tiny` records
 * of 60 to 100 bytes — many of them, so that a reader keeping tens of bytes per record read shows it (issue 37).
 */
export type LargeShape = 'bulky' | 'tiny';

const TS = '2026-06-19T03:14:08.000Z';
/** The shortest timestamp a record may carry: tiny records spend no byte they need not. */
const TINY_TS = '2026-06-19T03:14:08Z';
const CHUNK_BYTES = 1 << 20;

/** Appends lines to a file in chunks of about 1 MiB, so that generating a large file holds no large string. */
class LineSink {
  readonly #fd: number;
  #chunk: string[] = [];
  #chunkBytes = 0;
  bytes = 0;
  lines = 0;

  constructor(file: string) {
    mkdirSync(dirname(file), { recursive: true });
    this.#fd = openSync(file, 'w');
  }

  line(record: unknown): void {
    const text = `${JSON.stringify(record)}\n`;
    this.#chunk.push(text);
    this.#chunkBytes += text.length; // ASCII only: characters are bytes
    this.bytes += text.length;
    this.lines += 1;
    if (this.#chunkBytes >= CHUNK_BYTES) this.#flush();
  }

  close(): void {
    this.#flush();
    closeSync(this.#fd);
  }

  #flush(): void {
    if (this.#chunk.length > 0) writeSync(this.#fd, this.#chunk.join(''));
    this.#chunk = [];
    this.#chunkBytes = 0;
  }
}

/** Filler text: printable ASCII that differs from line to line (a reader cannot share one string between lines). */
function text(n: number, length: number): string {
  const head = `${n}:`;
  return head + 'abcdefghijklmnopqrstuvwxyz '.repeat(Math.ceil(length / 27)).slice(0, length - head.length);
}

/**
 * A turn journal: one completed turn, and between its two records extension records of about 4 KiB (bulky) or of the
 * fewest members an extension event needs (tiny, about 60 bytes, each with its own `created_at`).
 */
function turnJournal(sink: LineSink, bytes: number, shape: LargeShape): void {
  const common = { version: 1, turn_id: 't1', session_id: 's1' };
  sink.line({ ...common, event: 'submitted', created_at: 1770000000, role: 'user', content: 'hi' });
  for (let n = 0; sink.bytes < bytes; n++)
    sink.line(
      shape === 'tiny'
        ? { version: 1, event: 'x.tj.t', turn_id: 't1', created_at: n }
        : { ...common, event: 'x.tj-conformance.trace', created_at: 1770000000, n, data: text(n, 4000) },
    );
  sink.line({ ...common, event: 'completed', created_at: 1770000001 });
}

/**
 * An event log of one finished run streamed as many closed segments: each segment's text (six deltas of 600 bytes)
 * is closed by a tool call and never committed, so the message list stays the user message and the final answer.
 * Tiny: the run's bulk is extension records with an empty payload (about 70 bytes). Returns the last seq.
 */
function eventLog(sink: LineSink, bytes: number, shape: LargeShape): number {
  let seq = 0;
  const record = (type: string, payload: Record<string, unknown>) =>
    sink.line({ seq: seq++, ts: TS, type, payload: { request_id: 'r1', ...payload } });
  sink.line({ seq: seq++, ts: TS, type: 'message_append', payload: { message: { role: 'user', content: 'hi' } } });
  record('chat.started', {});
  while (shape === 'tiny' && sink.bytes < bytes) sink.line({ seq: seq++, ts: TINY_TS, type: 'x.tj.t', payload: {} });
  for (let n = 0; sink.bytes < bytes; n++) {
    record('assistant.segment.started', { message_id: `m${n}` });
    for (let d = 0; d < 6; d++) record('chat.delta', { message_id: `m${n}`, text: text(n * 6 + d, 600) });
    record('tool.start', { tool_call_id: `c${n}`, tool: 'search' });
    record('tool.end', { tool_call_id: `c${n}` });
  }
  sink.line({
    seq: seq++,
    ts: TS,
    type: 'message_append',
    payload: { message: { role: 'assistant', content: 'done' } },
  });
  record('chat.done', {});
  return seq - 1;
}

/** A run file: header, start, agent events of about 700 bytes (tiny: about 90 bytes, with no text), and its end. */
function runFile(sink: LineSink, bytes: number, shape: LargeShape): void {
  const common = { run_id: 'r1' };
  sink.line({ type: 'header', ...common, schema_version: 1, started_at: TS });
  sink.line({ type: 'run.start', ...common, ts: TS, input: { type: 'text', text: 'hi' } });
  for (let seq = 0; sink.bytes < bytes; seq++)
    sink.line(
      shape === 'tiny'
        ? { type: 'agent.event', ...common, ts: TINY_TS, seq, event: { type: 'd' } }
        : { type: 'agent.event', ...common, ts: TS, seq, event: { type: 'message_delta', text: text(seq, 600) } },
    );
  sink.line({ type: 'run.end', ...common, ts: TS, outcome: 'completed' });
}

/** Where each family's file lives in a store (spec §4.4), relative to the store's root. */
export const LARGE_STORE_PATHS: Readonly<Record<LargeFamily, string>> = {
  turn: '_turn_journal/s1.jsonl',
  event: 's1/events.jsonl',
  run: 'sessions/2026/06/19/r1.jsonl',
};

/** What a reader derives from a large store, as a store fixture case states it (paths relative to the root). */
type Expectation = StoreFixtureCase['expect'];

/**
 * Writes below `root` one file of about `bytesPerFile` bytes for each family, its bulk made of records of `shape`, and
 * returns the store's size in bytes, its number of lines and what a reader derives from it: no finding.
 */
export function writeLargeStore(
  root: string,
  families: readonly LargeFamily[],
  bytesPerFile: number,
  shape: LargeShape = 'bulky',
): { bytes: number; lines: number; expected: Expectation } {
  const expected: { -readonly [K in keyof Expectation]: Expectation[K] } = {
    turns: {},
    findings: [],
    runs: {},
    event_logs: {},
  };
  let bytes = 0;
  let lines = 0;
  for (const family of families) {
    const sink = new LineSink(join(root, LARGE_STORE_PATHS[family]));
    if (family === 'turn') {
      turnJournal(sink, bytesPerFile, shape);
      expected.turns = { s1: { t1: 'completed' } };
    } else if (family === 'event') {
      const lastSeq = eventLog(sink, bytesPerFile, shape);
      expected.event_logs = {
        [LARGE_STORE_PATHS.event]: {
          last_seq: lastSeq,
          messages: [
            { role: 'user', content: 'hi' },
            { role: 'assistant', content: 'done' },
          ],
          active_request_id: null,
          overlay: null,
          undelivered: ['r1'],
        },
      };
    } else {
      runFile(sink, bytesPerFile, shape);
      expected.runs = { [LARGE_STORE_PATHS.run]: 'completed' };
    }
    sink.close();
    bytes += sink.bytes;
    lines += sink.lines;
  }
  return { bytes, lines, expected };
}
