import type { GeneratedStore } from './generate-store.js';
import type { Random } from './random.js';

/** A generated store read with its own line-size limit (adapter.md §4.2, `max_line_bytes`). */
export interface SizedStore extends GeneratedStore {
  /** The limit the store is read with, in bytes without the LF (TJ-FRAME-031). */
  readonly maxLineBytes: number;
}

const TS = '2026-06-19T03:14:08Z';

/** Characters of one to four UTF-8 bytes: a limit counted in characters or UTF-16 units differs from one in bytes. */
const FILLERS = ['a', 'é', '中', '😀'] as const;

/**
 * A JSON line of exactly `bytes` UTF-8 bytes (at least the length of `head` + `tail` + 2): `head`, a string of
 * `filler` characters padded with ASCII to the byte, and `tail`.
 */
function lineOf(bytes: number, head: string, tail: string, filler: string): string {
  const room = bytes - Buffer.byteLength(head) - Buffer.byteLength(tail);
  const width = Buffer.byteLength(filler);
  const count = Math.max(0, Math.floor(room / width));
  const text = filler.repeat(count) + 'x'.repeat(room - count * width);
  return `${head}${text}${tail}`;
}

/**
 * A random store of tiny and huge records (spec §3.7), read with a limit drawn from 200 bytes to 64 KiB: an event log
 * and a turn journal, each made of many tiny records (extension records of 40 to 60 bytes, hundreds to thousands of
 * them) among records whose lines are the limit's length to within a few bytes — over it, at it, just under it —
 * written in characters of one to four UTF-8 bytes, sometimes ended by CR LF. A line over the limit is skipped as
 * `oversized_line` (TJ-FRAME-032) and one at it is read, whatever its characters: a reader that counts characters or
 * UTF-16 units instead of bytes, or measures the line with or without its CR the other way round from the reference,
 * disagrees with it.
 */
export function generateSizedStore(random: Random): SizedStore {
  const perturbations = new Set<string>();
  const limit = random.chance(0.5) ? random.int(200, 2_000) : random.int(2_000, 64 * 1024);
  const near = () => {
    const delta = random.pick([-3, -1, 0, 0, 1, 1, 2, 7]);
    perturbations.add(delta > 0 ? 'line over the limit' : delta === 0 ? 'line at the limit' : 'line under the limit');
    return limit + delta;
  };
  const ending = () => {
    if (!random.chance(0.15)) return '\n';
    perturbations.add('CRLF near the limit');
    return '\r\n';
  };
  const filler = () => {
    const chosen = random.pick(FILLERS);
    perturbations.add(`${Buffer.byteLength(chosen)}-byte characters`);
    return chosen;
  };

  // The event log: tiny extension records, and near the limit messages a user appended.
  const event: string[] = [];
  let seq = 0;
  const tiny = random.int(200, 3_000);
  const huge = random.int(1, 6);
  const hugeAt = new Set(Array.from({ length: huge }, () => random.int(0, tiny)));
  for (let i = 0; i <= tiny; i++) {
    if (hugeAt.has(i)) {
      const head = `{"seq":${seq},"ts":"${TS}","type":"message_append","payload":{"message":{"role":"user","content":"`;
      const ends = ending();
      event.push(`${lineOf(near() - (ends === '\r\n' ? 1 : 0), head, '"}}}', filler())}${ends}`);
      seq += 1;
    }
    event.push(`{"seq":${seq},"ts":"${TS}","type":"x.tj.t","payload":{}}\n`);
    seq += 1;
  }
  perturbations.add(`${tiny} tiny records`);

  // The turn journal: tiny extension events of one turn, and near the limit submitted turns.
  const turn: string[] = [
    '{"version":1,"event":"submitted","turn_id":"t0","session_id":"s1","created_at":1,"role":"user","content":"hi"}\n',
  ];
  const turnTiny = random.int(100, 1_500);
  for (let i = 1; i <= turnTiny; i++) {
    if (random.chance(3 / turnTiny)) {
      const head = `{"version":1,"event":"submitted","turn_id":"t${i}","session_id":"s1","created_at":${i},"content":"`;
      const ends = ending();
      turn.push(`${lineOf(near() - (ends === '\r\n' ? 1 : 0), head, '"}', filler())}${ends}`);
    }
    turn.push(`{"version":1,"event":"x.tj.t","turn_id":"t0","created_at":${i}}\n`);
  }
  turn.push('{"version":1,"event":"completed","turn_id":"t0","created_at":2}\n');

  return {
    files: [
      { path: 's1/events.jsonl', text: event.join('') },
      { path: '_turn_journal/s1.jsonl', text: turn.join('') },
    ],
    perturbations: [`limit ${limit} bytes`, ...perturbations],
    maxLineBytes: limit,
  };
}
