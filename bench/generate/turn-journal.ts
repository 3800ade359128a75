import { Prng } from './prng.js';
import { LineSink } from './sink.js';
import { makeCorpus, sliceText } from './text.js';

/** Options of {@link writeTurnJournal}. */
export interface TurnJournalOptions {
  /** Session id (also the file's stem). */
  readonly sessionId: string;
  /** Seed of the PRNG: the same options give the same bytes. */
  readonly seed: number;
  /** Stop once the file holds at least this many bytes… */
  readonly targetBytes?: number;
  /** …or this many turns, whichever is given. */
  readonly turns?: number;
  /** Epoch seconds of the first turn. */
  readonly startAt?: number;
  /** Probability that the last turn is left pending (a crash before its terminal record). */
  readonly pendingLast?: number;
  /** Probability that the file ends with a torn tail (a crash in the middle of an append). */
  readonly tornTail?: number;
}

/** What was written. */
export interface TurnJournalStats {
  readonly bytes: number;
  readonly lines: number;
  readonly turns: number;
}

const MODELS: readonly [string, string | null][] = [
  ['openai/gpt-5', 'openai'],
  ['anthropic/claude-sonnet-4.5', 'anthropic'],
  ['google/gemini-2.5-pro', 'google'],
  ['local/llama-3.1-70b', null],
];
const REASONS = ['cancelled', 'rate_limit', 'worker_error', 'server_startup_recovery'] as const;
const MIMES: readonly [string, string, boolean][] = [
  ['report.pdf', 'application/pdf', false],
  ['screenshot.png', 'image/png', true],
  ['data.csv', 'text/csv', false],
  ['photo.jpg', 'image/jpeg', true],
];

const corpora = new Map<number, string>();
function corpusFor(seed: number): string {
  let corpus = corpora.get(seed);
  if (corpus === undefined) {
    corpus = makeCorpus(new Prng(seed ^ 0x5eed), 256 * 1024);
    corpora.set(seed, corpus);
  }
  return corpus;
}

/** `YYYYMMDDTHHMMSSZ-<12 hex>` (spec TJ-TURN-004) for an epoch-seconds time. */
export function turnIdAt(seconds: number, prng: Prng): string {
  const iso = new Date(Math.floor(seconds) * 1000).toISOString(); // 2026-05-11T00:11:22.000Z
  const stamp = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}T${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  return `${stamp}-${prng.hex(12)}`;
}

/**
 * Writes one session's turn journal with the record shapes of spec §5.3: per turn a `submitted` (content of 50–2000
 * characters of mixed text, sometimes attachments), `worker_started`, usually `assistant_started`, then `completed`
 * (about 94 %) or `interrupted`. Turns follow each other, as one session's turns do. Deterministic for a seed.
 */
export function writeTurnJournal(path: string, options: TurnJournalOptions): TurnJournalStats {
  const prng = new Prng(options.seed);
  const corpus = corpusFor(1);
  const sink = new LineSink(path);
  const session_id = options.sessionId;
  const maxTurns = options.turns ?? Number.POSITIVE_INFINITY;
  const targetBytes = options.targetBytes ?? Number.POSITIVE_INFINITY;
  let at = options.startAt ?? 1778458282.123;
  let messageIndex = 0;
  let turns = 0;
  const [model0, provider0] = prng.pick(MODELS);
  while (turns < maxTurns && sink.bytes < targetBytes) {
    turns += 1;
    const last = turns === maxTurns;
    const turn_id = turnIdAt(at, prng);
    const stream_id = `stream-${prng.hex(4)}`;
    const [model, model_provider] = prng.chance(0.9) ? [model0, provider0] : prng.pick(MODELS);
    const common = (event: string) => ({
      version: 1,
      event,
      turn_id,
      session_id,
      stream_id,
      created_at: Math.round(at * 1000) / 1000,
    });
    const submitted: Record<string, unknown> = {
      ...common('submitted'),
      role: 'user',
      content: sliceText(prng, corpus, prng.int(50, 2000)),
    };
    if (prng.chance(0.1)) {
      const count = prng.int(1, 3);
      submitted.attachments = Array.from({ length: count }, () => {
        const [name, mime, is_image] = prng.pick(MIMES);
        return { name, path: `/data/uploads/${prng.hex(8)}/${name}`, mime, size: prng.int(1000, 5_000_000), is_image };
      });
    }
    submitted.workspace = '/workspace';
    submitted.model = model;
    submitted.model_provider = model_provider;
    sink.record(submitted);
    messageIndex += 1;
    if (last && prng.chance(options.pendingLast ?? 0)) {
      // A crash: the turn stops at some non-terminal state.
      const stage = prng.int(0, 2);
      at += prng.next() * 2;
      if (stage >= 1) sink.record(common('worker_started'));
      if (stage >= 2) sink.record({ ...common('assistant_started'), assistant_message_index: messageIndex });
      break;
    }
    at += 0.2 + prng.next() * 2;
    sink.record(common('worker_started'));
    const interrupted = prng.chance(0.06);
    const hasOutput = !interrupted || prng.chance(0.5);
    if (hasOutput) {
      at += 0.3 + prng.next() * 3;
      sink.record({ ...common('assistant_started'), assistant_message_index: messageIndex });
    }
    at += 1 + prng.next() * 30;
    if (interrupted) {
      sink.record({ ...common('interrupted'), reason: prng.pick(REASONS), terminal: true });
    } else {
      sink.record({ ...common('completed'), assistant_message_index: messageIndex, terminal: true });
      messageIndex += 1;
    }
    at += 5 + prng.next() * 600;
  }
  if (prng.chance(options.tornTail ?? 0)) {
    const torn = JSON.stringify({ version: 1, event: 'worker_started', turn_id: 'torn', created_at: at });
    sink.raw(torn.slice(0, prng.int(5, torn.length - 5)));
  }
  sink.close();
  return { bytes: sink.bytes, lines: sink.lines, turns };
}
