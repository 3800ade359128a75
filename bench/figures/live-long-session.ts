import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { live } from '../lib/live.js';
import { ShuffledSamples } from '../lib/order.js';
import { gc, judge, median, nowMs, quantile, round } from '../lib/stats.js';
import type { Figure, FigureRow } from '../lib/types.js';
import { writer } from '../lib/writer.js';

const SESSION = 's1';

/**
 * Writes a session's event log of `runs` short finished runs through the writer (`none` mode, then one flush): a user
 * message, a segment of two deltas, its assistant message, `chat.done` and an ack, so that opening it recovers
 * nothing. Two messages a run: a long conversation by its count of messages, which is what a run's cost must not follow.
 */
async function writeManyRuns(root: string, runs: number): Promise<{ size: number; messages: number }> {
  mkdirSync(join(root, SESSION), { recursive: true });
  const log = await writer.openEventLog({ root, sessionId: SESSION, durability: 'none' });
  for (let r = 0; r < runs; r += 1) {
    const requestId = `old-${r}`;
    const messageId = `${requestId}.a1`;
    log.chatStarted({ requestId, content: `question ${r}` });
    log.appendMessage({ role: 'user', content: `question ${r}`, id: `${requestId}.user`, request_id: requestId });
    log.segmentStarted({ requestId, messageId });
    log.delta({ requestId, messageId, text: 'an answer ' });
    log.delta({ requestId, messageId, text: `number ${r}` });
    log.appendMessage({ role: 'assistant', content: `an answer number ${r}`, id: messageId, request_id: requestId });
    log.chatDone({ requestId });
    log.ack(requestId, { clientId: 'bench' });
  }
  await log.flush();
  const messages = log.snapshot().messages.length;
  await log.close();
  return { size: statSync(join(root, SESSION, 'events.jsonl')).size, messages };
}

/**
 * A run on a long session (issue 15, "at O(tail) cost"): `send`, three deltas and `done`, awaited, on a session whose
 * log holds 20,000 earlier runs (40,000 messages) against the same on a session of 10 runs, one sample of each per
 * round in a shuffled order. Both go through the real file system: the durable records of a run (`submitted`,
 * `chat.started` and the user message, `chat.done`, the turn's end) and their syncs are most of its time, and what a
 * long conversation may add on top is what the ratio shows. Copying the message list to count it at each segment (the
 * build of 2026-11-27 02:00) put the ratio well above the target at 20,000 runs, and the build without the copy below
 * it, alternated on a loaded machine: the target sits between the two (bench/results/history.md, "Long conversations,
 * 2026-11-27 night").
 */
export const liveLongSession: Figure = {
  id: 'live-long-session',
  title: 'live run (send, deltas, done) on a session of 20,000 runs vs one of 10',
  async run(context): Promise<FigureRow[]> {
    const runs = context.mode === 'quick' ? 2_000 : 20_000;
    const samples = context.mode === 'quick' ? 20 : 150;
    const open = async (root: string, count: number) => {
      const built = await writeManyRuns(root, count);
      gc();
      const hub = live.openConversationHub({ root, retention: false });
      const session = await hub.session(SESSION);
      return { ...built, hub, session, ms: [] as number[] };
    };
    const short = await open(join(context.workDir, 'short'), 10);
    const long = await open(join(context.workDir, 'long'), runs);
    const oneRun = async (target: typeof short, i: number) => {
      const begin = nowMs();
      const sent = await target.session.send({ requestId: `new-${i}`, content: 'a question' });
      if (!sent.created) throw new Error(`run new-${i} already existed`);
      sent.run.delta('an ');
      sent.run.delta('answer ');
      sent.run.delta('here');
      await sent.run.done();
      return nowMs() - begin;
    };
    const shuffled = new ShuffledSamples(2);
    try {
      // One untimed run on each first: the first segment of a session pays for its turn journal's creation.
      await oneRun(short, -1);
      await oneRun(long, -1);
      for (let i = 0; i < samples; i += 1)
        await shuffled.sample([
          async () => short.ms.push(await oneRun(short, i)),
          async () => long.ms.push(await oneRun(long, i)),
        ]);
    } finally {
      await short.hub.close();
      await long.hub.close();
    }
    const longMs = median(long.ms);
    const shortMs = median(short.ms);
    context.log(
      `  a run: ${longMs.toFixed(3)} ms on ${runs} runs (${long.messages} messages, ${(long.size / 1e6).toFixed(1)} MB) vs ${shortMs.toFixed(3)} ms on 10 runs`,
    );
    return [
      {
        id: 'live-long-session',
        name: `live run (send, 3 deltas, done) on a session of ${runs.toLocaleString('en')} runs (${long.messages.toLocaleString('en')} messages)`,
        value: round(longMs),
        unit: 'ms',
        floor: round(shortMs),
        floorUnit: 'ms on a session of 10 runs',
        ratioDefinition: 'value / floor (latency); lower is better',
        direction: 'lower',
        target: 'ratio <= 1.15',
        ...judge(longMs / shortMs, 'lower', 1.15),
        status: 'measured',
        note: `median of ${samples} runs on each session, the two sampled in a shuffled order; real file system (each run syncs its durable records); p90 ${round(quantile(long.ms, 0.9), 3)} ms vs ${round(quantile(short.ms, 0.9), 3)} ms`,
        details: { runs, messages: long.messages, bytes: long.size, samples },
      },
    ];
  },
};
