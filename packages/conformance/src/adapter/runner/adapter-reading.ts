import type { StoreObservation } from '../../fixtures/run-store-fixtures.js';
import { relativeReading } from '../../fixtures/run-store-fixtures.js';
import type { AdapterProcess } from '../process.js';
import type { ReadResult } from '../protocol.js';

/** What the adapter's `read` of the store at `root` observes, with file paths relative to `root`. */
export async function adapterReading(
  process: AdapterProcess,
  root: string,
  mode: 'tolerant' | 'prefix' | 'strict' | undefined,
  audit: boolean,
  maxLineBytes?: number,
): Promise<Omit<StoreObservation, 'replay'>> {
  const result = (await process.request('read', {
    paths: [root],
    // A case without a mode is read without one: the adapter must then read in tolerant mode (TJ-FRAME-020).
    ...(mode === undefined ? {} : { mode }),
    ...(audit ? { audit: true } : {}),
    ...(maxLineBytes === undefined ? {} : { max_line_bytes: maxLineBytes }),
  })) as ReadResult;
  return relativeReading(
    {
      turns: result.turns ?? {},
      findings: result.findings,
      runs: result.runs ?? {},
      event_logs: result.event_logs ?? {},
      plan: result.plan ?? [],
    },
    root,
  );
}
