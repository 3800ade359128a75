import { type Finding, makeFinding, type SessionState } from '@turnjournal/schema';
import type { DerivedRun } from '../run/fold-run.js';

/** What {@link checkStaleState} needs of a run: its id and its model invocations. */
export type StaleStateRun = Pick<DerivedRun, 'runId' | 'llmCalls'>;

/** Options of {@link checkStaleState}. */
export interface CheckStaleStateOptions {
  /** The state document's file, named in the finding (TJ-AUDIT-003). */
  readonly file?: string;
}

/**
 * Reports `stale_state` (TJ-STATE-006) when the run the snapshot names by `run_id` is among `runs` and has an
 * `llm.request` whose `seq` is greater than the snapshot's `invoke_seq`: the snapshot missed at least one invocation.
 * Sequence numbers are compared, never timestamps. Pure; returns zero or one finding.
 *
 * Choices where §8 is silent: a snapshot without `run_id` or without `invoke_seq` is never stale (there is nothing to
 * compare); when several runs carry the named id (copies of one run file), the highest request `seq` among them counts;
 * only requests the run fold derived count, so one after `run.end` does not.
 */
export function checkStaleState(
  state: SessionState,
  runs: Iterable<StaleStateRun>,
  options: CheckStaleStateOptions = {},
): Finding[] {
  const runId = state.run_id;
  const invokeSeq = state.invoke_seq;
  if (runId === undefined || invokeSeq === undefined) return [];
  let highest: number | undefined;
  for (const run of runs) {
    if (run.runId !== runId) continue;
    for (const call of run.llmCalls) {
      if (call.request !== undefined && (highest === undefined || call.seq > highest)) highest = call.seq;
    }
  }
  if (highest === undefined || highest <= invokeSeq) return [];
  return [
    makeFinding(
      'stale_state',
      `the snapshot reflects llm.request seq ${invokeSeq}, but run ${JSON.stringify(runId)} has one with seq ${highest}`,
      {
        ...(options.file === undefined ? {} : { file: options.file }),
        session_id: state.session_id,
        run_id: runId,
      },
    ),
  ];
}
