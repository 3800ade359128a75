import type { GeneratedStore } from './generate-store.js';
import type { Random } from './random.js';

/** The shard files of a session (spec §4.4): the session's own file and two writers' shards. */
const SHARDS = ['', '~w1', '~w2'] as const;

/**
 * A random store of conflicting records (spec §10.4): turns of two sessions whose event names have two or three
 * distinct records each (a retried `submitted` with another `created_at` and content, terminals with other reasons
 * or message indexes), spread over a session's shard files at random, in random line order, some copied exactly
 * into a second shard (TJ-DERIVE-011). The record that represents an event name (TJ-DERIVE-013: smallest bytes) is
 * then the first one read, the last one, or the one with the smallest `created_at` only by chance — at most one time
 * in two for each event name with two or more distinct records, and every store has at least eight of those.
 */
export function generateConflictStore(random: Random): GeneratedStore {
  const files: { path: string; text: string }[] = [];
  let conflicted = 0;
  for (const sessionId of ['s1', 's2']) {
    const shards: string[][] = SHARDS.map(() => []);
    const place = (line: string) => {
      const first = random.int(0, SHARDS.length - 1);
      (shards[first] as string[]).push(line);
      // An exact copy in another shard: one record, not a conflict (TJ-DERIVE-011).
      if (random.chance(0.2))
        (shards[(first + random.int(1, SHARDS.length - 1)) % SHARDS.length] as string[]).push(line);
    };
    const turns = random.int(2, 3);
    for (let t = 1; t <= turns; t++) {
      const turnId = `t${t}`;
      const variants = (make: (n: number) => Record<string, unknown>) => {
        const count = random.int(2, 3);
        conflicted += 1;
        // Distinct values: the variant number goes into a member every variant has.
        for (let n = 0; n < count; n++)
          place(JSON.stringify({ version: 1, turn_id: turnId, session_id: sessionId, ...make(n) }));
      };
      const at = () => random.int(1_770_000_000, 1_770_009_999);
      variants((n) => ({ event: 'submitted', created_at: at(), role: 'user', content: `${random.pick(WORDS)} ${n}` }));
      if (random.chance(0.5))
        variants(() => ({ event: 'worker_started', created_at: at(), x_worker: random.int(1, 99) }));
      const ending = random.int(0, 2);
      if (ending !== 1)
        variants((n) => ({ event: 'completed', created_at: at(), assistant_message_index: random.int(0, 9) * 10 + n }));
      if (ending !== 0)
        variants((n) => ({ event: 'interrupted', created_at: at(), reason: `${random.pick(REASONS)}_${n}` }));
    }
    for (const [index, lines] of shards.entries())
      if (lines.length > 0)
        files.push({
          path: `_turn_journal/${sessionId}${SHARDS[index]}.jsonl`,
          text: random
            .shuffle(lines)
            .map((line) => `${line}\n`)
            .join(''),
        });
  }
  return { files, perturbations: [`${conflicted} event names with conflicting records`] };
}

const WORDS = ['hello', 'retry', 'again', 'zeta', 'alpha', 'Ünïcode', 'a\u2028b'];
const REASONS = ['cancelled', 'worker_error', 'rate_limit', 'timeout'];
