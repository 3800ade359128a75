// Reader defects of event logs read in prefix mode (spec §6.8) for the mutation matrix: the reference adapter's `read`
// with the one mistake the defect names, the rest of the answer (turns, findings, runs) read in the requested mode.

import { referenceImplementation } from '@turnjournal/conformance';
import { recoverEventLog } from '@turnjournal/reader';

/** A `read` whose event-log states are replaced by `statesOf(result, paths, mode, …)` in prefix mode only. */
const readWithPrefixStates = (statesOf) => async (paths, mode, audit, maxLineBytes, representatives) => {
  const result = await referenceImplementation.read(paths, mode, audit, maxLineBytes, representatives);
  if (mode !== 'prefix') return result;
  return { ...result, event_logs: await statesOf(result, paths, audit, maxLineBytes) };
};

export const eventModeDefects = {
  // TJ-EVENT-031: the mode decides what the store's turn journals derive from, but every event log is folded whole,
  // as the reference did before §6.8.
  'event-prefix-ignored': {
    read: readWithPrefixStates(
      async (_result, paths, audit, maxLineBytes) =>
        (await referenceImplementation.read(paths, 'tolerant', audit, maxLineBytes)).event_logs,
    ),
  },
  // TJ-EVENT-032: a prefix read that recovers from the last valid checkpoint, as tolerant recovery does, whenever the
  // log has one: the view then holds a checkpoint, and the records after it, written after the first damaged line.
  'prefix-trusts-checkpoint': {
    read: readWithPrefixStates(async (result, _paths, _audit, maxLineBytes) => {
      const limit = maxLineBytes === undefined ? {} : { maxLineBytes };
      const states = { ...result.event_logs };
      for (const [file, state] of Object.entries(states)) {
        const recovered = await recoverEventLog(file, limit);
        if (recovered.checkpointOffset === null) continue;
        states[file] = {
          ...state,
          last_seq: recovered.lastSeq,
          messages: recovered.messages,
          active_request_id: recovered.activeRun?.requestId ?? null,
          overlay: recovered.overlay?.text ?? null,
          epoch: recovered.epoch,
        };
      }
      return states;
    }),
  },
};
