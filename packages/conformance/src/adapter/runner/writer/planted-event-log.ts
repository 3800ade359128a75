import type { AdapterProcess } from '../../process.js';
import { expectOk } from './answers.js';

// What the event-log checks that continue a harness-written log share (`writer/event-epoch`,
// `writer/event-split-checkpoint`): the log they plant and the messages they append to it.

/**
 * Messages the harness writes, none a checkpoint: one short of TJ-EVENT-006's default 50, so a writer that follows the
 * default appends its first checkpoint with the first or second record it is given.
 */
export const PLANTED_MESSAGES = 49;

/**
 * A log of {@link PLANTED_MESSAGES} `message_append` records, users and assistants in turn, each with `content(seq)`,
 * the first carrying `epoch` (TJ-EVENT-023).
 */
export function plantedMessages(epoch: string, content: (seq: number) => string): string {
  let text = '';
  for (let seq = 0; seq < PLANTED_MESSAGES; seq++) {
    const record: Record<string, unknown> = {
      seq,
      ts: '2026-06-19T03:14:07Z',
      type: 'message_append',
      payload: { message: { role: seq % 2 === 0 ? 'user' : 'assistant', content: content(seq) } },
    };
    if (seq === 0) record.epoch = epoch;
    text += `${JSON.stringify(record)}\n`;
  }
  return text;
}

/** Appends `count` user messages to the log `file` through `event_append`, each by a writer opened for it (§5.4). */
export async function appendMessages(
  process: AdapterProcess,
  file: string,
  count: number,
  log: string,
  failures: string[],
): Promise<void> {
  for (let n = 0; n < count; n++)
    await expectOk(
      process,
      'event_append',
      { file, type: 'message_append', payload: { message: { role: 'user', content: `appended ${n}` } } },
      `append ${n} to ${log}`,
      failures,
    );
}
