import type { GeneratedStore } from './generate-store.js';
import type { Random } from './random.js';

/** Where a generated event log begins: a new log at seq 0, or a log as compaction leaves it (spec §14.2). */
export type EventLogStart = 'fresh' | 'compacted';

/** The lowest and highest seq of the checkpoint a generated compacted log begins at. */
export const COMPACTED_SEQ_RANGE = [1_000, 1_000_000] as const;

const TS = '2026-06-19T03:14:07.123456+00:00';

/** Text with the separators a reader must keep inside strings (TJ-FRAME-001, TJ-FRAME-002), now and then. */
function text(random: Random, perturbations: Set<string>, base: string): string {
  if (!random.chance(0.1)) return base;
  perturbations.add('raw U+2028/U+2029');
  return `${base}\u2028${random.pick(['ü', '中', '😀'])}\u2029`;
}

/**
 * One event log's records as its writer would append them, then damaged at the line level. The log is folded by the
 * reference reader to know what it holds, so the generator need not be right about validity: it only has to reach
 * the situations (every record type of §6, seq gaps, duplicates and regressions, extension and unknown records with and
 * without a seq, damage) in many combinations.
 */
class EventLogBuilder {
  readonly lines: string[] = [];
  readonly perturbations: Set<string>;
  readonly #random: Random;
  #seq: number;
  readonly #firstSeq: number;
  #messages: unknown[] = [];
  #run = 0;
  #epoch: string | undefined;

  constructor(random: Random, perturbations: Set<string>, start: EventLogStart) {
    this.#random = random;
    this.perturbations = perturbations;
    this.#seq = start === 'fresh' ? 0 : random.int(...COMPACTED_SEQ_RANGE);
    this.#firstSeq = this.#seq;
    if (random.chance(0.4)) this.#epoch = `e${random.int(1, 99)}`;
    if (start === 'compacted') this.#compactedStart();
  }

  /** A record of `type` with the next seq (or, with a gap, a later one). */
  record(type: string, payload: Record<string, unknown> | undefined, envelope: Record<string, unknown> = {}): void {
    const random = this.#random;
    if (random.chance(0.04)) {
      this.#seq += random.int(1, 3);
      this.perturbations.add('seq gap');
    }
    const epoch = this.#epoch !== undefined && (this.lines.length === 0 || type === 'checkpoint') ? this.#epoch : null;
    const value: Record<string, unknown> = {
      seq: this.#seq,
      ts: TS,
      type,
      ...(payload === undefined ? {} : { payload }),
      ...(epoch === null ? {} : { epoch }),
      ...envelope,
    };
    this.#seq += 1;
    this.lines.push(JSON.stringify(value));
    this.#seqPerturbation();
  }

  /**
   * In a compacted log, a line with a seq below the checkpoint's, as a writer of the log before compaction would have
   * appended it: a regression like any other (TJ-EVENT-014), not a leftover to drop silently.
   */
  staleLine(): void {
    const seq = this.#firstSeq - this.#random.int(1, 500);
    this.lines.push(
      JSON.stringify({ seq, ts: TS, type: 'message_append', payload: { message: { role: 'user', content: 'old' } } }),
    );
    this.perturbations.add('seq below the first');
  }

  /** Now and then a line that repeats an accepted seq, exactly or with other content, or one below the last. */
  #seqPerturbation(): void {
    const random = this.#random;
    if (this.lines.length < 2 || !random.chance(0.06)) return;
    const kind = random.int(0, 2);
    if (kind === 0) {
      this.lines.push(random.pick(this.lines));
      this.perturbations.add('duplicated line');
    } else {
      const seq = kind === 1 ? this.#seq - random.int(1, 3) : this.#seq - random.int(2, 8);
      const type = random.pick(['message_append', 'x.acme.note', 'chat.delta']);
      this.lines.push(
        JSON.stringify({
          seq,
          ts: TS,
          type,
          payload: { message: { role: 'user', content: 'late' }, request_id: 'rz' },
        }),
      );
      this.perturbations.add(kind === 1 ? 'repeated seq' : 'seq below the last');
    }
  }

  message(role: string, content: string, extra: Record<string, unknown> = {}): void {
    const message = { role, content, ...extra };
    this.#messages.push(message);
    this.record('message_append', { message });
  }

  checkpoint(withRuns: boolean): void {
    const payload: Record<string, unknown> = { messages: [...this.#messages] };
    if (withRuns) payload.runs = [];
    this.record('checkpoint', payload);
    this.perturbations.add('checkpoint');
  }

  /** A run of the assistant (spec §6.3): started, segments of deltas, tool calls, and a finish or none. */
  run(last: boolean): void {
    const random = this.#random;
    const requestId = `r${++this.#run}`;
    const content = text(random, this.perturbations, `question ${this.#run}`);
    this.record('chat.started', { request_id: requestId, content, ...(random.chance(0.5) ? { model: 'm1' } : {}) });
    this.message('user', content);
    const segments = random.int(last ? 1 : 0, 3);
    for (let s = 0; s < segments; s++) {
      const messageId = `${requestId}-m${s}`;
      this.record('assistant.segment.started', { request_id: requestId, message_id: messageId });
      let said = '';
      for (let d = random.int(1, 4); d > 0; d--) {
        const piece = text(random, this.perturbations, `w${random.int(0, 99)} `);
        said += piece;
        // A delta of another segment's message now and then: not part of this overlay (TJ-REPLAY-009).
        const other = random.chance(0.05);
        if (other) this.perturbations.add('delta of another message');
        this.record('chat.delta', { request_id: requestId, message_id: other ? 'elsewhere' : messageId, text: piece });
        // An extension or unknown record between two deltas leaves the segment open (TJ-COMPAT-006, TJ-REPLAY-009).
        if (random.chance(0.2)) this.#extension();
      }
      // The last segment of an unfinished run stays open: the overlay.
      if (s === segments - 1 && last && random.chance(0.6)) {
        this.perturbations.add('open segment');
        return;
      }
      this.message('assistant', said, { id: messageId });
      if (random.chance(0.4)) {
        const call = `${requestId}-c${s}`;
        this.record('tool.start', { request_id: requestId, tool_call_id: call, tool: 'search', args: { q: said } });
        this.record('tool.result', { request_id: requestId, tool_call_id: call, output: 'found', is_error: false });
        this.record('tool.end', { request_id: requestId, tool_call_id: call });
        this.message('tool', 'found', { tool_call_id: call });
        this.perturbations.add('tool call');
      }
    }
    if (!last && random.chance(0.12)) {
      this.perturbations.add('abandoned run');
      return;
    }
    if (last && random.chance(0.4)) return;
    const finish = random.pick(['chat.done', 'chat.done', 'chat.error', 'chat.cancelled'] as const);
    const extra =
      finish === 'chat.error'
        ? { error: { message: 'boom' } }
        : finish === 'chat.cancelled' && random.chance(0.5)
          ? { reason: 'cancelled' }
          : {};
    this.record(finish, { request_id: requestId, ...extra });
    if (random.chance(0.5)) {
      this.record('delivery.ack', {
        request_id: requestId,
        ...(random.chance(0.5) ? { client_id: 'c1', through_seq: this.#seq - 1 } : {}),
      });
      this.perturbations.add('delivery ack');
    }
    if (random.chance(0.1)) {
      this.record('chat.started', { request_id: requestId });
      this.perturbations.add('second chat.started');
    }
  }

  /** An edit, an undo or a checkpoint of the message list (spec §6.2). */
  messageOperation(): void {
    const random = this.#random;
    const kind = random.int(0, 4);
    if (kind === 0) {
      const index = random.int(0, this.#messages.length + 1);
      const message = { role: 'user', content: text(random, this.perturbations, `edited ${index}`) };
      if (index < this.#messages.length) this.#messages[index] = message;
      else this.perturbations.add('edit out of range');
      this.record('message_edit', { index, message });
    } else if (kind === 1) {
      this.#messages = this.#messages.slice(0, random.int(0, this.#messages.length));
      this.record('message_edit', { messages: [...this.#messages] });
    } else if (kind === 2) {
      const n = random.int(1, 3);
      if (n > this.#messages.length) this.perturbations.add('undo past the start');
      this.#messages = this.#messages.slice(0, Math.max(0, this.#messages.length - n));
      this.record('undo', random.chance(0.3) ? undefined : { n });
    } else if (kind === 3) {
      this.checkpoint(random.chance(0.3));
    } else {
      this.#extension();
    }
  }

  /** An extension record (ignored), an unknown type (`unknown_record`), or either without a seq. */
  #extension(): void {
    const random = this.#random;
    const type = random.pick(['x.acme.note', 'future.kind']);
    if (random.chance(0.25)) {
      this.lines.push(JSON.stringify({ ts: TS, type, payload: { note: 'no seq' } }));
      this.perturbations.add(`${type === 'x.acme.note' ? 'extension' : 'unknown'} record without seq`);
      return;
    }
    this.record(type, { note: 'n', request_id: 'rx' });
    this.perturbations.add(`${type === 'x.acme.note' ? 'extension' : 'unknown'} record`);
  }

  /**
   * A compacted log's first line (spec §14.2): a checkpoint with seq N holding the messages kept, and sometimes a run
   * index whose runs' records compaction removed.
   */
  #compactedStart(): void {
    const random = this.#random;
    this.#messages = Array.from({ length: random.int(0, 4) }, (_, i) => ({
      role: i % 2 === 0 ? 'user' : 'assistant',
      content: `kept ${i}`,
    }));
    const payload: Record<string, unknown> = { messages: [...this.#messages] };
    if (random.chance(0.5)) {
      payload.runs = [
        {
          request_id: 'r0',
          started_seq: this.#seq - 40,
          started_ts: TS,
          outcome: 'done',
          finished_seq: this.#seq - 3,
          finished_ts: TS,
          acked: random.chance(0.5),
          acked_by: [],
        },
      ];
      this.perturbations.add('run index of removed runs');
    }
    const epoch = this.#epoch === undefined ? {} : { epoch: this.#epoch };
    this.lines.push(JSON.stringify({ seq: this.#seq, ts: TS, type: 'checkpoint', payload, ...epoch }));
    this.#seq += 1;
    this.perturbations.add(`compacted at seq ${this.#seq - 1}`);
  }
}

/** Line-level damage: garbage and blank lines, glued records, CR LF, and a torn tail (spec §3). */
function damage(random: Random, lines: readonly string[], perturbations: Set<string>, keepFirst: boolean): string {
  const out: string[] = [];
  for (const [index, line] of lines.entries()) {
    const protectedLine = keepFirst && index === 0;
    if (!protectedLine && random.chance(0.03)) {
      out.push(`{"seq":${random.int(0, 9)},"type":garbage`);
      perturbations.add('garbage line');
    }
    if (!protectedLine && random.chance(0.02)) {
      out.push('');
      perturbations.add('blank line');
    }
    if (!protectedLine && random.chance(0.03) && line.length > 10) {
      out.push(`${line.slice(0, random.int(1, line.length - 1))}${line}`);
      perturbations.add('glued line');
      continue;
    }
    out.push(line);
  }
  let body = out.map((l) => `${l}${random.chance(0.03) ? '\r' : ''}\n`).join('');
  if (body.includes('\r')) perturbations.add('CRLF');
  if (random.chance(0.25)) {
    body += `{"seq":${random.int(0, 2_000_000)},"ts":"${TS}","type":"chat.delta","payload":{"request_id":"r`;
    perturbations.add('torn tail');
  }
  return body;
}

/**
 * A random store of one or two event logs (spec §6, §15): runs of the assistant with segments, deltas, tool calls and
 * each way of finishing (or none: the active run, an abandoned run), delivery acks, edits, undos and checkpoints,
 * extension and unknown records with and without a seq, seq gaps, duplicated and regressed seqs, raw U+2028/U+2029
 * inside strings, and line damage (garbage, blank and glued lines, CR LF, torn tails). With `compacted` each log
 * begins as compaction leaves it: at a checkpoint whose seq N is drawn from {@link COMPACTED_SEQ_RANGE}, sometimes with
 * a run index.
 */
export function generateEventLogStore(random: Random, start: EventLogStart): GeneratedStore {
  const perturbations = new Set<string>();
  const files: { path: string; text: string }[] = [];
  const logs = random.int(1, 2);
  for (let l = 1; l <= logs; l++) {
    const log = new EventLogBuilder(random, perturbations, start);
    if (start === 'fresh' && random.chance(0.5)) log.message('system', 'You are terse.');
    const steps = random.int(2, 8);
    const staleAt = start === 'compacted' && random.chance(0.6) ? random.int(0, steps - 1) : -1;
    for (let s = 0; s < steps; s++) {
      const last = s === steps - 1;
      if (s === staleAt) log.staleLine();
      if (last || random.chance(0.6)) log.run(last);
      else log.messageOperation();
    }
    files.push({ path: `c${l}/events.jsonl`, text: damage(random, log.lines, perturbations, start === 'compacted') });
  }
  return { files, perturbations: [...perturbations] };
}
