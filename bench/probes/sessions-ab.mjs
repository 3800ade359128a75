// A/B of two writer builds on the sessions-64 loop (64 AppendFile, durability every, N awaited appends each), alternated
// pair by pair in one process: node bench/probes/sessions-ab.mjs <old writer index.js> <new writer index.js> [pairs] [per session].
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const [aPath, bPath, pairsArg = '8', perArg = '40'] = process.argv.slice(2);

import { existsSync } from 'node:fs';
import { dirname } from 'node:path';

const load = async (p) => {
  const fse = join(dirname(p), 'file-system-entry.js');
  return { ...(await import(p)), ...(existsSync(fse) ? await import(fse) : {}) };
};
const A = await load(aPath),
  B = await load(bPath);
const pairs = Number(pairsArg),
  per = Number(perArg);
const record = (i) => ({
  version: 1,
  event: 'submitted',
  turn_id: `20260511T001122Z-${i.toString(16).padStart(12, '0')}`,
  session_id: 'conv-bench0005',
  stream_id: 'stream-4f1a',
  created_at: 1778458282.123 + i,
  role: 'user',
  content:
    'Summarise the attached report and list the three biggest risks, with one sentence each. Keep it short: the audience reads it on a phone between meetings.',
  workspace: '/workspace',
  model: 'openai/gpt-5',
  model_provider: 'openai',
});
const dir = mkdtempSync('/tmp/ab-');
async function run(w, tag, n) {
  const files = await Promise.all(
    Array.from({ length: 64 }, (_, s) => w.AppendFile.open(join(dir, `${tag}-${s}.jsonl`), { durability: 'every' })),
  );
  const t = performance.now();
  await Promise.all(
    files.map(async (f, s) => {
      for (let i = 0; i < n; i++) await f.appendRecord(record(s * 100000 + i));
    }),
  );
  const ms = performance.now() - t;
  await Promise.all(files.map((f) => f.close()));
  return ms;
}
await run(A, 'wa', 4);
await run(B, 'wb', 4);
const ratios = [];
let sa = 0,
  sb = 0;
for (let p = 0; p < pairs; p++) {
  const first = p % 2 === 0;
  const a = first ? await run(A, `a${p}`, per) : 0;
  const b = await run(B, `b${p}`, per);
  const a2 = first ? a : await run(A, `a${p}`, per);
  sa += a2;
  sb += b;
  ratios.push(b / a2);
  console.log(
    `pair ${p}: A ${(((64 * per) / a2) * 1000).toFixed(0)} B ${(((64 * per) / b) * 1000).toFixed(0)} rec/s  B/A time ${(b / a2).toFixed(3)}`,
  );
}
ratios.sort((x, y) => x - y);
console.log(`median B/A time ${ratios[Math.floor(ratios.length / 2)].toFixed(3)}  total ${(sb / sa).toFixed(3)}`);
rmSync(dir, { recursive: true, force: true });
