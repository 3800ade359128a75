import { Prng } from './prng.js';
import { LineSink } from './sink.js';
import { makeCorpus, sliceText } from './text.js';

/** Options of {@link writeEventLog}. */
export interface EventLogOptions {
  /** Number of records (events) in the log, checkpoints included. */
  readonly events: number;
  /** Seed of the PRNG. */
  readonly seed: number;
  /** A checkpoint after every this many records since the previous one (spec TJ-EVENT-006; 50 by default). */
  readonly checkpointEvery?: number;
  /**
   * When the message list grows past this many messages, the host compacts the conversation: a `message_edit` with
   * `messages` replaces it with the system prompt and a summary (what agents do when the context window fills).
   * This bounds the size of a checkpoint, which holds the whole list. Default 40.
   */
  readonly compactAbove?: number;
}

/** What was written. */
export interface EventLogStats {
  readonly bytes: number;
  readonly events: number;
  readonly checkpoints: number;
  readonly runs: number;
}

const TOOLS = ['shell', 'read_file', 'write_file', 'search', 'browser'];

/**
 * Writes one session's event log with the record shapes of spec §6: runs of `chat.started`, the user's
 * `message_append`, sometimes a tool call (`tool.start`, `tool.result`, `tool.end`, a tool `message_append`), an
 * assistant segment (`assistant.segment.started`, 5–60 `chat.delta`, the assistant's `message_append`), then
 * `chat.done` and usually a `delivery.ack`; a `checkpoint` with the whole message list every `checkpointEvery`
 * records. The log stops at exactly `events` records, possibly in the middle of a run (the active run).
 */
export function writeEventLog(path: string, options: EventLogOptions): EventLogStats {
  const prng = new Prng(options.seed);
  const corpus = makeCorpus(new Prng(options.seed ^ 0xc0ffee), 128 * 1024);
  const every = options.checkpointEvery ?? 50;
  const compactAbove = options.compactAbove ?? 40;
  const sink = new LineSink(path);
  let seq = 0;
  let sinceCheckpoint = 0;
  let checkpoints = 0;
  let runs = 0;
  let time = Date.UTC(2026, 5, 19, 3, 14, 1);
  const system = {
    role: 'system',
    content: 'You are a coding agent. Answer briefly and run tests before claiming success.',
  };
  let messages: Record<string, unknown>[] = [];

  // Returns false once the log is full.
  const emit = (type: string, payload: Record<string, unknown>): boolean => {
    if (seq >= options.events) return false;
    time += prng.int(5, 400);
    sink.record({ seq, ts: new Date(time).toISOString(), type, payload });
    seq += 1;
    sinceCheckpoint += 1;
    if (type === 'message_append') messages.push(payload.message as Record<string, unknown>);
    if (type === 'message_edit' && Array.isArray(payload.messages)) messages = [...payload.messages];
    if (sinceCheckpoint >= every && seq < options.events) {
      time += 1;
      sink.record({ seq, ts: new Date(time).toISOString(), type: 'checkpoint', payload: { messages } });
      seq += 1;
      sinceCheckpoint = 0;
      checkpoints += 1;
    }
    return seq < options.events;
  };

  const run = (): boolean => {
    runs += 1;
    const request_id = `req-${prng.hex(8)}`;
    const content = sliceText(prng, corpus, prng.int(20, 600));
    if (!emit('chat.started', { request_id, model: 'gpt-5', content })) return false;
    if (!emit('message_append', { message: { role: 'user', content } })) return false;
    if (prng.chance(0.4)) {
      const tool_call_id = `call_${prng.hex(6)}`;
      const tool = prng.pick(TOOLS);
      const output = sliceText(prng, corpus, prng.int(10, 1500));
      if (!emit('tool.start', { request_id, tool_call_id, tool, args: { cmd: 'pnpm test', cwd: '/workspace' } }))
        return false;
      if (!emit('tool.result', { request_id, tool_call_id, output, is_error: prng.chance(0.1) })) return false;
      if (!emit('tool.end', { request_id, tool_call_id })) return false;
      if (!emit('message_append', { message: { role: 'tool', content: output, tool_call_id } })) return false;
    }
    const message_id = `msg-${prng.hex(8)}`;
    if (!emit('assistant.segment.started', { request_id, message_id })) return false;
    const deltas: string[] = [];
    const count = prng.int(5, 60);
    for (let i = 0; i < count; i += 1) {
      const text = sliceText(prng, corpus, prng.int(2, 40));
      deltas.push(text);
      if (!emit('chat.delta', { request_id, message_id, text })) return false;
    }
    if (!emit('message_append', { message: { role: 'assistant', content: deltas.join(''), id: message_id } }))
      return false;
    if (!emit('chat.done', { request_id })) return false;
    if (prng.chance(0.9) && !emit('delivery.ack', { request_id, client_id: 'pwa-1', through_seq: seq - 1 }))
      return false;
    if (messages.length > compactAbove) {
      const summary = { role: 'user', content: `Summary of the conversation so far: ${sliceText(prng, corpus, 400)}` };
      if (!emit('message_edit', { messages: [system, summary] })) return false;
    }
    return true;
  };

  if (emit('message_append', { message: system })) while (run()) {}
  sink.close();
  return { bytes: sink.bytes, events: seq, checkpoints, runs };
}
