import type { RecordStore } from '@turnjournal/reader/record-store';
import { type EventLog, openEventLog } from '@turnjournal/writer';

/** Where the scripted clock starts: every backend's log gets the same `ts` values, so their lines can be compared. */
export const SCRIPT_START = Date.parse('2026-11-29T00:00:00.000Z');

/** Opens the log of `s1` on `store` with a clock that ticks a second per record and a fixed epoch. */
export function openScriptedLog(store: RecordStore, clock: { now: number }): Promise<EventLog> {
  return openEventLog({
    store,
    sessionId: 's1',
    durability: 'group',
    checkpointInterval: 4,
    clock: () => (clock.now += 1000),
    newEpoch: () => 'epoch-1',
  });
}

/** A conversation of three runs, with streamed segments and enough records for automatic checkpoints. */
export async function converseThreeRuns(log: EventLog): Promise<void> {
  for (let r = 0; r < 3; r++) {
    const requestId = `r${r}`;
    await log.chatStarted({ requestId });
    await log.appendMessage({ role: 'user', content: `question ${r}`, id: `${requestId}.user` });
    await log.segmentStarted({ requestId, messageId: `${requestId}.a` });
    for (let n = 0; n < 6; n++) await log.delta({ requestId, messageId: `${requestId}.a`, text: `word${n} ` });
    await log.appendMessage({
      role: 'assistant',
      content: 'word0 word1 word2 word3 word4 word5 ',
      id: `${requestId}.a`,
    });
    await log.chatDone({ requestId });
  }
}
