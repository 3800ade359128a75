#!/usr/bin/env node
// Hostile turn journals for issue 11, defect 8: a store whose one journal holds
//   duplicates  N distinct `worker_started` records of one turn (a `conflicting_duplicate` each),
//   orphans     N records of N turns that have no `submitted` (an `orphan_turn` each),
//   turns       N turns of `submitted` + `completed`.
// Usage: node generate-turn-journals.mjs <kind> <dir> [N]. N defaults to the full size of the issue (1 M, 2 M, 1 M)
// when TJ_HOSTILE_FULL=1 and to 10,000 otherwise. Prints the journal's path. Lines are written in batches, so the
// generator itself needs little memory.
import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';

const FULL = { duplicates: 1_000_000, orphans: 2_000_000, turns: 1_000_000 };
const [kind, dir, count] = process.argv.slice(2);
if (!(kind in FULL) || dir === undefined) {
  process.stderr.write('usage: generate-turn-journals.mjs duplicates|orphans|turns <dir> [N]\n');
  process.exit(2);
}
const n = count !== undefined ? Number(count) : process.env.TJ_HOSTILE_FULL === '1' ? FULL[kind] : 10_000;

const journal = join(dir, '_turn_journal', 's.jsonl');
mkdirSync(join(dir, '_turn_journal'), { recursive: true });
const out = createWriteStream(journal);
const base = 1_780_000_000;
// Turn ids in code-point order, as time-prefixed ids are: the fold's common case.
const id = (i) => `t${String(i).padStart(8, '0')}`;
const line = (event, turn, at, extra = '') =>
  `{"version":1,"event":"${event}","turn_id":"${turn}","session_id":"s","created_at":${at}${extra}}\n`;

function* lines() {
  if (kind === 'duplicates') {
    yield line('submitted', 't', base, ',"role":"user","content":"hi"');
    for (let i = 0; i < n; i += 1) yield line('worker_started', 't', base + i);
  } else if (kind === 'orphans') {
    for (let i = 0; i < n; i += 1) yield line('worker_started', id(i), base + i);
  } else {
    for (let i = 0; i < n; i += 1) {
      yield line('submitted', id(i), base + i, ',"role":"user","content":"a question"');
      yield line('completed', id(i), base + i + 0.5, ',"terminal":true');
    }
  }
}

let batch = '';
for (const text of lines()) {
  batch += text;
  if (batch.length < 1 << 20) continue;
  const flushed = out.write(batch);
  batch = '';
  if (!flushed) await new Promise((resolve) => out.once('drain', resolve));
}
out.end(batch);
await new Promise((resolve) => out.on('close', resolve));
process.stdout.write(`${journal}\n`);
