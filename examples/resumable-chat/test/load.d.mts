/** The figures and verdicts of one load-test run (see load.mjs). */
export interface LoadReport {
  clients: number;
  sessions: number;
  seconds: number;
  sendsAttempted: number;
  accepted: number;
  rejected: Record<string, number>;
  drops: number;
  connects: number;
  replays: number;
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  gaps: number;
  duplicates: number;
  fullSnapshots: number;
  errors: string[];
  mismatches: string[];
  root: string;
}

export function runLoad(options?: {
  clients?: number;
  sessions?: number;
  seconds?: number;
  tokenMs?: number;
  seed?: number;
  keep?: boolean;
}): Promise<LoadReport>;
