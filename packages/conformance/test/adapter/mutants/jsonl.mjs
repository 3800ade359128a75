// What the hand-written defects read back: the JSON records of a JSONL file, as a simple implementation parses it.
import { existsSync, readFileSync } from 'node:fs';

/** The JSON records of a JSONL file, in order; lines that do not parse are left out, a missing file has none. */
export function records(file) {
  if (!existsSync(file)) return [];
  const out = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    try {
      if (line.length > 0) out.push(JSON.parse(line));
    } catch {}
  }
  return out;
}
