import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { StoreFixtureCase } from '../../fixtures/fixture-file.js';

// A store whose files are large while what a reader derives from them stays small: the bulk is what a fold reads and
// forgets (stream text of closed segments, agent events, extension records). A reader that streams (TJ-FRAME-033) reads
// it in memory that does not follow the file size; one that holds what it read does not.

/** The JSONL families a large store can hold. */
export type LargeFamily = 'turn' | 'event' | 'run';

const TS = '2026-06-19T03:14:08.000Z';
const CHUNK_BYTES = 1 << 20;

/** Appends lines to a file in chunks of about 1 MiB, so that generating a large file holds no large string. */
class LineSink {
  readonly #fd: number;
  #chunk: string[] = [];
  #chunkBytes = 0;
  bytes = 0;

  constructor(file: string) {
    mkdirSync(dirname(file), { recursive: true });
    this.#fd = openSync(file, 'w');
  }

  line(record: unknown): void {
    const text = `${JSON.stringify(record)}\n`;
    this.#chunk.push(text);
    this.#chunkBytes += text.length; // ASCII only: characters are bytes
    this.bytes += text.length;
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

/** A turn journal: one completed turn, and between its two records extension records of about 4 KiB. */
function turnJournal(sink: LineSink, bytes: number): void {
  const common = { version: 1, turn_id: 't1', session_id: 's1' };
  sink.line({ ...common, event: 'submitted', created_at: 1770000000, role: 'user', content: 'hi' });
  for (let n = 0; sink.bytes < bytes; n++)
    sink.line({ ...common, event: 'x.tj-conformance.trace', created_at: 1770000000, n, data: text(n, 4000) });
  sink.line({ ...common, event: 'completed', created_at: 1770000001 });
}

/**
 * An event log of one finished run streamed as many closed segments: each segment's text (six deltas of 600 bytes)
 * is closed by a tool call and never committed, so the message list stays the user message and the final answer.
 * Returns the last seq.
 */
function eventLog(sink: LineSink, bytes: number): number {
  let seq = 0;
  const record = (type: string, payload: Record<string, unknown>) =>
    sink.line({ seq: seq++, ts: TS, type, payload: { request_id: 'r1', ...payload } });
  sink.line({ seq: seq++, ts: TS, type: 'message_append', payload: { message: { role: 'user', content: 'hi' } } });
  record('chat.started', {});
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

/** A run file: header, start, agent events of about 700 bytes, and its end. */
function runFile(sink: LineSink, bytes: number): void {
  const common = { run_id: 'r1' };
  sink.line({ type: 'header', ...common, schema_version: 1, started_at: TS });
  sink.line({ type: 'run.start', ...common, ts: TS, input: { type: 'text', text: 'hi' } });
  for (let seq = 0; sink.bytes < bytes; seq++)
    sink.line({ type: 'agent.event', ...common, ts: TS, seq, event: { type: 'message_delta', text: text(seq, 600) } });
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
 * Writes below `root` one file of about `bytesPerFile` bytes for each family, and returns the store's size in bytes and
 * what a reader derives from it: no finding.
 */
export function writeLargeStore(
  root: string,
  families: readonly LargeFamily[],
  bytesPerFile: number,
): { bytes: number; expected: Expectation } {
  const expected: { -readonly [K in keyof Expectation]: Expectation[K] } = {
    turns: {},
    findings: [],
    runs: {},
    event_logs: {},
  };
  let bytes = 0;
  for (const family of families) {
    const sink = new LineSink(join(root, LARGE_STORE_PATHS[family]));
    if (family === 'turn') {
      turnJournal(sink, bytesPerFile);
      expected.turns = { s1: { t1: 'completed' } };
    } else if (family === 'event') {
      const lastSeq = eventLog(sink, bytesPerFile);
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
      runFile(sink, bytesPerFile);
      expected.runs = { [LARGE_STORE_PATHS.run]: 'completed' };
    }
    sink.close();
    bytes += sink.bytes;
  }
  return { bytes, expected };
}
