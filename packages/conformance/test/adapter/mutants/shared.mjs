// What the hand-written defects share: the JSON records of a JSONL file, and whether a lock file names a live holder,
// as a simple implementation in another language would do them.
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';

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

/**
 * True when the lock file `lockFile` names a live process of this host, or any process of another host (which this
 * host cannot prove dead); false when there is no lock or its holder is gone.
 */
export function heldByLiveProcess(lockFile) {
  try {
    const lock = JSON.parse(readFileSync(lockFile, 'utf8'));
    if (lock.host !== hostname()) return true;
    process.kill(lock.pid, 0);
    return true;
  } catch (error) {
    return error?.code === 'EPERM';
  }
}
