import { type JournalSource, RunFold, readJournal } from '@turnjournal/reader';
import type { Finding, RunHeader } from '@turnjournal/schema';

/** What a run writer learns from the file it reopens (a restarted process continuing a run). */
export interface ExistingRun {
  /** The family of the file's first record that belongs to one (spec §4.2), or undefined for a file without one. */
  readonly family: string | undefined;
  /** The header, when the file's first run record is a valid one. */
  readonly header: RunHeader | undefined;
  /** The run id of the file: its header's, else its first run record's (TJ-FAM-019). */
  readonly runId: string | undefined;
  /** The unsupported `schema_version` of the header, if it declares one (TJ-COMPAT-012). */
  readonly unsupportedVersion: number | undefined;
  /** True when the file holds a `run.end` (TJ-RUNSEM-001). */
  readonly ended: boolean;
  /** The highest `agent.event` `seq` written, if any. */
  readonly lastAgentSeq: number | undefined;
  /** Every `llm.request` `seq` written. */
  readonly requestSeqs: ReadonlySet<number>;
  /** The `llm.request` `seq` values without an `llm.response`. */
  readonly openRequests: ReadonlySet<number>;
  /** Findings about lines already in the file (mid-file damage is left in place and reported, never repaired). */
  readonly findings: readonly Finding[];
}

/**
 * Reads a run file through the writer's own descriptor (`source`) and folds it with the reader's {@link RunFold}, so
 * that the writer continues the run exactly as a reader derives it. The torn tail was repaired before this read, so
 * a `torn_tail` finding cannot occur; any other finding is kept for the caller.
 */
export async function readExistingRun(path: string, source: JournalSource, maxLineBytes: number): Promise<ExistingRun> {
  const fold = new RunFold();
  const framing: Finding[] = [];
  let family: string | undefined;
  let lastAgentSeq: number | undefined;
  let ended = false;
  const where = { file: path };
  for await (const batch of readJournal(path, { source, maxLineBytes })) {
    for (const item of batch) {
      if (item.kind === 'finding') {
        if (item.finding.code !== 'torn_tail') framing.push(item.finding);
        continue;
      }
      const { validation, value } = item.record;
      const classification = validation.classification;
      if (classification.family === 'none' || classification.family === 'unknown') continue;
      family ??= classification.family;
      fold.add(item.record, where);
      if (classification.family === 'run' && classification.type === 'run.end' && validation.status === 'valid')
        ended = true;
      // Every agent.event counts, even one a reader reports after run.end: a new seq must exceed them all.
      if (classification.family === 'run' && classification.type === 'agent.event' && validation.status === 'valid') {
        const seq = value.seq as number;
        if (lastAgentSeq === undefined || seq > lastAgentSeq) lastAgentSeq = seq;
      }
    }
  }
  const run = fold.finish();
  const requestSeqs = new Set<number>();
  const openRequests = new Set<number>();
  for (const call of run.llmCalls) {
    if (call.request === undefined) continue;
    requestSeqs.add(call.seq);
    if (call.response === undefined) openRequests.add(call.seq);
  }
  return {
    family,
    header: run.header,
    runId: run.runId,
    unsupportedVersion: run.unsupportedVersion,
    ended,
    lastAgentSeq,
    requestSeqs,
    openRequests,
    findings: [...framing, ...run.findings],
  };
}

/** The run bookkeeping a run writer keeps, seeded from {@link readExistingRun}; mutated as records are written. */
export interface RunState {
  /** True once `run.end` is written or reserved. */
  ended: boolean;
  /** The highest `agent.event` `seq` written or reserved. */
  lastAgentSeq: number | undefined;
  /** Every `llm.request` `seq` written or reserved. */
  readonly requestSeqs: Set<number>;
  /** Requests without a response. */
  readonly openRequests: Set<number>;
  /** The `seq` the writer gives the next `llm.request` without an explicit one. */
  nextLlmSeq: number;
  /** Findings about the file as it was opened. */
  readonly findings: readonly Finding[];
}

/** The bookkeeping a writer continues from, for a file read by {@link readExistingRun}. */
export function runStateOf(existing: ExistingRun, firstLlmSeq: number): RunState {
  let nextLlmSeq = firstLlmSeq;
  for (const seq of existing.requestSeqs) nextLlmSeq = Math.max(nextLlmSeq, seq + 1);
  return {
    ended: existing.ended,
    lastAgentSeq: existing.lastAgentSeq,
    requestSeqs: new Set(existing.requestSeqs),
    openRequests: new Set(existing.openRequests),
    nextLlmSeq,
    findings: existing.findings,
  };
}
