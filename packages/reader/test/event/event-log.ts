import { DEFAULT_PROPERTY_RUNS, propertyParameters } from '@turnjournal/test-support';
import fc from 'fast-check';
import { EventLogFold, type EventLogState } from '../../src/event/fold-event-log.js';
import type { ReadJournalOptions } from '../../src/framing/read-journal.js';
import { readAll } from '../support/temp.js';

/** Property settings shared by the event tests: the repository's seed and run count (TJ_PROPERTY_SEED, TJ_PROPERTY_RUNS). */
export const PROPERTY = propertyParameters();

/** Timeout of a property test: each run writes and reads temporary files, so it grows with the run count. */
export const PROPERTY_TIMEOUT = Math.max(30_000, (PROPERTY.numRuns ?? DEFAULT_PROPERTY_RUNS) * 200);

/** One event record as a line, with LF. */
export const line = (value: unknown): string => `${JSON.stringify(value)}\n`;

/** An event record with envelope. */
export const ev = (seq: number, type: string, payload?: Record<string, unknown>) => ({
  seq,
  ts: `2026-06-19T03:14:${String(seq % 60).padStart(2, '0')}Z`,
  type,
  ...(payload === undefined ? {} : { payload }),
});

/** A message. */
export const msg = (role: string, content: string) => ({ role, content });

/** Folds a whole file with {@link EventLogFold}, returning the state and the framing findings. */
export async function foldFile(
  path: string,
  options: ReadJournalOptions = {},
): Promise<EventLogState & { framing: string[] }> {
  const fold = new EventLogFold();
  const framing: string[] = [];
  for (const item of await readAll(path, options)) {
    if (item.kind === 'finding') framing.push(item.finding.code);
    else fold.add(item.record, { file: path });
  }
  return { ...fold.finish(), framing };
}

/** How a generated record's seq relates to the seqs before it. */
type SeqStep = 'next' | 'gap' | 'dup' | 'back';

type Op =
  | { k: 'append'; role: string; text: string }
  | { k: 'editIndex'; index: number; text: string }
  | { k: 'editAll'; size: number }
  | { k: 'undo'; n: number | undefined }
  | { k: 'checkpoint'; size: number; damage: 'none' | 'truncated' | 'invalid' }
  | { k: 'started' }
  | { k: 'segment'; run: number; mid: number }
  | { k: 'delta'; run: number; mid: number; text: string }
  | { k: 'tool'; sub: 'tool.start' | 'tool.end' | 'tool.result'; run: number }
  | { k: 'finish'; sub: 'chat.done' | 'chat.error' | 'chat.cancelled'; run: number }
  | { k: 'ack'; run: number }
  | { k: 'other'; type: 'x.acme.note' | 'future.thing' }
  | { k: 'garbage'; text: string }
  | { k: 'blank' };

const text = fc.string({ maxLength: 12 });
const run = fc.nat({ max: 5 });

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    arbitrary: fc.record({ k: fc.constant('append' as const), role: fc.constantFrom('user', 'assistant'), text }),
    weight: 5,
  },
  fc.record({ k: fc.constant('editIndex' as const), index: fc.nat({ max: 6 }), text }),
  fc.record({ k: fc.constant('editAll' as const), size: fc.nat({ max: 3 }) }),
  fc.record({ k: fc.constant('undo' as const), n: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }) }),
  {
    arbitrary: fc.record({
      k: fc.constant('checkpoint' as const),
      size: fc.nat({ max: 4 }),
      damage: fc.constantFrom('none', 'none', 'none', 'truncated', 'invalid'),
    }),
    weight: 3,
  },
  { arbitrary: fc.record({ k: fc.constant('started' as const) }), weight: 2 },
  { arbitrary: fc.record({ k: fc.constant('segment' as const), run, mid: fc.nat({ max: 1 }) }), weight: 2 },
  { arbitrary: fc.record({ k: fc.constant('delta' as const), run, mid: fc.nat({ max: 1 }), text }), weight: 4 },
  fc.record({ k: fc.constant('tool' as const), sub: fc.constantFrom('tool.start', 'tool.end', 'tool.result'), run }),
  fc.record({
    k: fc.constant('finish' as const),
    sub: fc.constantFrom('chat.done', 'chat.error', 'chat.cancelled'),
    run,
  }),
  fc.record({ k: fc.constant('ack' as const), run }),
  fc.record({ k: fc.constant('other' as const), type: fc.constantFrom('x.acme.note', 'future.thing') }),
  fc.record({
    k: fc.constant('garbage' as const),
    text: fc.constantFrom(
      'not json',
      '{"seq":',
      '\u0000\u0000\u0000',
      '[1,2]',
      '{"seq":3,"ts":"t","type":"checkpoint"',
    ),
  }),
  fc.record({ k: fc.constant('blank' as const) }),
);

/** A generated event log: its bytes and, per line that holds an event record valid for its type, seq and value. */
export interface GeneratedLog {
  readonly content: string;
  /** The valid event records in file order (what an independent oracle applies the seq rules to). */
  readonly valid: readonly { seq: number; value: Record<string, unknown> }[];
}

/**
 * Event logs with checkpoints (some damaged or invalid), runs, acks, unknown and extension types, garbage and blank
 * lines, CRLF endings, an optional BOM and an optional torn tail (sometimes a whole checkpoint). With `anomalies`,
 * seqs also jump, repeat and go back, except that checkpoints and `chat.started` always take a fresh highest seq, so
 * the record the recovery trusts is one the whole-file fold accepts. Request ids are never reused for `chat.started`
 * (TJ-EVENT-010).
 */
export function eventLog(anomalies: boolean): fc.Arbitrary<GeneratedLog> {
  const step: fc.Arbitrary<SeqStep> = anomalies
    ? fc.constantFrom<SeqStep>('next', 'next', 'next', 'next', 'gap', 'dup', 'back')
    : fc.constantFrom<SeqStep>('next', 'next', 'next', 'next', 'gap');
  return fc
    .record({
      ops: fc.array(fc.record({ op, step, crlf: fc.boolean() }), { maxLength: 60, size: 'medium' }),
      firstSeq: fc.nat({ max: 3 }),
      bom: fc.boolean(),
      torn: fc.constantFrom('', '{"seq":9', 'checkpoint'),
    })
    .map(({ ops, firstSeq, bom, torn }) => build(ops, firstSeq, bom, torn));
}

function build(
  ops: readonly { op: Op; step: SeqStep; crlf: boolean }[],
  firstSeq: number,
  bom: boolean,
  torn: string,
): GeneratedLog {
  let content = bom ? '\uFEFF' : '';
  const valid: { seq: number; value: Record<string, unknown> }[] = [];
  const used: number[] = [];
  let max = firstSeq - 1;
  let started = 0;
  let counter = 0;
  const seqFor = (s: SeqStep, fresh: boolean): number => {
    let seq: number;
    if (fresh || s === 'next' || used.length === 0) seq = max + 1;
    else if (s === 'gap') seq = max + 2;
    else if (s === 'dup') seq = used[counter++ % used.length] ?? 0;
    else seq = Math.max(0, max - 1 - (counter++ % 3));
    used.push(seq);
    max = Math.max(max, seq);
    return seq;
  };
  // Mostly the latest run, sometimes an earlier one or one never started.
  const req = (n: number) => `r${n < 3 ? Math.max(0, started - 1) : n % (started + 1)}`;
  const messages = (size: number) => Array.from({ length: size }, (_, i) => msg('user', `m${i}`));
  for (const { op, step, crlf } of ops) {
    const end = crlf ? '\r\n' : '\n';
    if (op.k === 'garbage') {
      content += `${op.text}${end}`;
      continue;
    }
    if (op.k === 'blank') {
      content += end;
      continue;
    }
    const fresh = op.k === 'checkpoint' || op.k === 'started';
    const seq = seqFor(step, fresh);
    let value: Record<string, unknown>;
    let isValid = true;
    switch (op.k) {
      case 'append':
        value = ev(seq, 'message_append', { message: msg(op.role, op.text) });
        break;
      case 'editIndex':
        value = ev(seq, 'message_edit', { index: op.index, message: msg('assistant', op.text) });
        break;
      case 'editAll':
        value = ev(seq, 'message_edit', { messages: messages(op.size) });
        break;
      case 'undo':
        value = op.n === undefined ? ev(seq, 'undo') : ev(seq, 'undo', { n: op.n });
        break;
      case 'checkpoint':
        value = ev(seq, 'checkpoint', { messages: op.damage === 'invalid' ? 'x' : messages(op.size) });
        isValid = op.damage === 'none';
        if (op.damage === 'truncated') {
          content += `${JSON.stringify(value).slice(0, -1)}${end}`;
          continue;
        }
        break;
      case 'started':
        value = ev(seq, 'chat.started', { request_id: `r${started}`, content: 'hi' });
        started += 1;
        break;
      case 'segment':
        value = ev(seq, 'assistant.segment.started', { request_id: req(op.run), message_id: `m${op.mid}` });
        break;
      case 'delta':
        value = ev(seq, 'chat.delta', { request_id: req(op.run), message_id: `m${op.mid}`, text: op.text });
        break;
      case 'tool':
        value = ev(seq, op.sub, {
          request_id: req(op.run),
          tool_call_id: 'c1',
          ...(op.sub === 'tool.start' ? { tool: 'shell' } : {}),
          ...(op.sub === 'tool.result' ? { output: 'ok' } : {}),
        });
        break;
      case 'finish':
        value = ev(seq, op.sub, {
          request_id: req(op.run),
          ...(op.sub === 'chat.error' ? { error: { message: 'boom' } } : {}),
        });
        break;
      case 'ack':
        value = ev(seq, 'delivery.ack', { request_id: req(op.run) });
        break;
      case 'other':
        value = ev(seq, op.type, { note: 'n' });
        break;
    }
    if (isValid) valid.push({ seq, value });
    content += `${JSON.stringify(value)}${end}`;
  }
  const tail = torn === 'checkpoint' ? JSON.stringify(ev(max + 1, 'checkpoint', { messages: [] })) : torn;
  return { content: content + tail, valid };
}

/** The seq rules of spec §6.5 applied to the valid records: the records a reader accepts, in file order. */
export function acceptedByOracle(log: GeneratedLog): { seq: number; value: Record<string, unknown> }[] {
  const out: { seq: number; value: Record<string, unknown> }[] = [];
  let max = -1;
  for (const record of log.valid) {
    if (record.seq <= max) continue;
    max = record.seq;
    out.push(record);
  }
  return out;
}
