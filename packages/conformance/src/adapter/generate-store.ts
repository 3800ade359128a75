import type { Random } from './random.js';

/** A generated store: files as a store fixture case holds them (paths relative to the store root). */
export interface GeneratedStore {
  /** The files. */
  readonly files: { readonly path: string; readonly text: string }[];
  /** Which perturbations went in, for the failure message. */
  readonly perturbations: readonly string[];
}

const NON_TERMINAL = ['worker_started', 'assistant_started'] as const;

/**
 * A random turn store (spec §10): valid turn histories of one or two sessions spread over shard files in shuffled
 * order (TJ-DERIVE-002, TJ-DERIVE-004), with created_at values unrelated to the order (TJ-DERIVE-003), and seeded
 * perturbations: duplicated records (TJ-DERIVE-011), events after a terminal event (TJ-DERIVE-008), both terminals
 * (TJ-DERIVE-010), unknown members and event names (TJ-DERIVE-005), raw U+2028/U+2029 in strings (TJ-FRAME-002),
 * garbage and glued lines (TJ-FRAME-016, TJ-FRAME-026), CRLF (TJ-FRAME-013) and torn tails (TJ-FRAME-003).
 */
export function generateTurnStore(random: Random): GeneratedStore {
  const perturbations = new Set<string>();
  const files: { path: string; text: string }[] = [];
  const sessions = random.int(1, 2);
  for (let s = 1; s <= sessions; s++) {
    const sessionId = `s${s}`;
    const lines: string[] = [];
    const turns = random.int(1, 5);
    for (let t = 1; t <= turns; t++) {
      const turnId = `t${String(t).padStart(2, '0')}`;
      const record = (event: string, extra: Record<string, unknown> = {}) => {
        const value: Record<string, unknown> = {
          version: 1,
          event,
          turn_id: turnId,
          created_at: random.int(1, 1000),
          ...extra,
        };
        if (random.chance(0.1)) {
          value[`x_future_${random.int(1, 9)}`] = { nested: [1, 'two'] };
          perturbations.add('unknown member');
        }
        return JSON.stringify(value);
      };
      let content = `hello ${turnId}`;
      if (random.chance(0.15)) {
        content = `line one\u2028line two\u2029end`;
        perturbations.add('raw U+2028/U+2029');
      }
      if (!random.chance(0.05)) lines.push(record('submitted', { session_id: sessionId, role: 'user', content }));
      else perturbations.add('orphan turn');
      const progress = random.int(0, 2);
      for (let i = 0; i < progress; i++) lines.push(record(NON_TERMINAL[i] as string));
      const ending = random.int(0, 4);
      if (ending === 1 || ending === 3) lines.push(record('completed'));
      if (ending === 2 || ending === 3)
        lines.push(record('interrupted', { reason: random.pick(['cancelled', 'rate_limit', 'worker_error']) }));
      if (ending === 3) perturbations.add('completed and interrupted');
      if (ending > 0 && random.chance(0.25)) {
        lines.push(record(random.pick(NON_TERMINAL)));
        perturbations.add('event after terminal');
      }
      if (random.chance(0.1)) {
        lines.push(record('future_event'));
        perturbations.add('unknown event name');
      }
      if (random.chance(0.1)) {
        lines.push(record('x.acme.note', { note: 'n' }));
        perturbations.add('extension event');
      }
    }
    for (const line of [...lines]) {
      if (random.chance(0.1)) {
        lines.push(line);
        perturbations.add('duplicate record');
      }
    }
    const shards = random.int(1, 3);
    const shardLines: string[][] = Array.from({ length: shards }, () => []);
    for (const line of random.shuffle(lines)) (shardLines[random.int(0, shards - 1)] as string[]).push(line);
    shardLines.forEach((shard, index) => {
      const out: string[] = [];
      for (const line of shard) {
        if (random.chance(0.05)) {
          out.push(`{"version":1,"event":garbage ${random.int(0, 99)}`);
          perturbations.add('garbage line');
        }
        if (random.chance(0.05) && line.length > 10) {
          out.push(`${line.slice(0, random.int(1, line.length - 1))}${line}`);
          perturbations.add('glued line');
          continue;
        }
        out.push(line);
      }
      let text = out.map((l) => `${l}${random.chance(0.03) ? '\r' : ''}\n`).join('');
      if (text.includes('\r')) perturbations.add('CRLF');
      if (random.chance(0.2)) {
        text += `{"version":1,"event":"completed","turn_id":"t0${random.int(1, 5)}","crea`;
        perturbations.add('torn tail');
      }
      const name = index === 0 ? `${sessionId}.jsonl` : `${sessionId}~${index * 7}.jsonl`;
      files.push({ path: `_turn_journal/${name}`, text });
    });
  }
  return { files, perturbations: [...perturbations] };
}
