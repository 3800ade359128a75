// Server process of the live-answer-memory figure: one hub in <mode> (`durable` | `segments`) streams one answer of
// <answerBytes> as `run.delta` calls of <chunkBytes> each, in segments of at most <segmentBytes> (a tool call between
// two: one segment's message must fit in a line of the log, 16 MiB), with <subscribers> (0 or 1) subscriber taking
// records and tokens live in this process. It prints one JSON line:
//   {"baseline": {rss, heapUsed}, "held": heapUsed, "streaming": {...}, "peak": {rss, heapUsed}, "retained": {rss, heapUsed}, "closed": {...}, "ms", "deltas"}
// where `baseline` is taken after GC once the run started, `peak` is the highest sample while the answer streamed
// (sampled every 10 ms and every 64 KiB of answer; `streaming`: before `run.done()`), `held` the highest heap after GC at eight points of the stream, `retained` after `run.done()` and GC with the session still open,
// and `closed` after `hub.close()` and GC.
// Each configuration runs in a process of its own (`node --expose-gc`), so nothing of another one is counted.
// Plain JavaScript on purpose: no TypeScript loader adds its own memory.
// Usage: node --expose-gc bench/child/live-answer-memory.mjs <root> <mode> <answerBytes> <chunkBytes> <segmentBytes> <subscribers>
import { setImmediate as yieldToLoop } from 'node:timers/promises';

const [root, mode, answerArg, chunkArg, segmentArg, subscribersArg] = process.argv.slice(2);
const answerBytes = Number(answerArg);
const chunkBytes = Number(chunkArg);
const segmentBytes = Number(segmentArg);
const subscribers = Number(subscribersArg);
const live = await import(process.env.TJ_BENCH_LIVE ?? '../../packages/live/dist/index.js');

function collect() {
  globalThis.gc();
  globalThis.gc();
}
function measure() {
  const { rss, heapUsed } = process.memoryUsage();
  return { rss, heapUsed };
}

// The answer's text: words of 2 to 9 letters, a paragraph end about every 600 bytes (what `segments` mode writes at).
// Built once as bytes; each delta decodes its own slice, so every token is a fresh string as it is off the network.
const source = Buffer.alloc(Math.min(answerBytes, 4 * 1024 * 1024));
let state = 0x2545f491;
const random = () => {
  state ^= state << 13;
  state ^= state >>> 17;
  state ^= state << 5;
  return (state >>> 0) / 0x1_0000_0000;
};
for (let at = 0, paragraph = 0; at < source.length; ) {
  const word = 2 + Math.floor(random() * 8);
  for (let i = 0; i < word && at < source.length; i += 1) source[at++] = 97 + Math.floor(random() * 26);
  paragraph += word + 1;
  if (paragraph > 600 && at + 2 <= source.length) {
    source[at++] = 10;
    source[at++] = 10;
    paragraph = 0;
  } else if (at < source.length) source[at++] = 32;
}

const hub = live.openConversationHub({ root, retention: false, tokens: mode });
const session = await hub.session('answer');
const sent = await session.send({ requestId: 'r1', content: 'a long answer' });
if (!sent.created) throw new Error('the run was not created');
const run = sent.run;

// The subscriber reads as a transport would: every event as it comes, nothing kept.
let received = 0;
const reading = [];
for (let i = 0; i < subscribers; i += 1) {
  const subscription = session.subscribe({ after: session.durableSeq, tokens: true });
  reading.push(
    (async () => {
      for await (const event of subscription) {
        received += 1;
        if (event.kind === 'cut_off')
          throw new Error(`the subscriber was cut off at ${event.cursor}, after ${received} events`);
      }
    })(),
  );
}

collect();
const baseline = measure();
const peak = { ...baseline };
const sample = () => {
  const now = measure();
  if (now.rss > peak.rss) peak.rss = now.rss;
  if (now.heapUsed > peak.heapUsed) peak.heapUsed = now.heapUsed;
};
const sampler = setInterval(sample, 10);

const started = performance.now();
let deltas = 0;
let segment = 0;
let toolCalls = 0;
let sinceSample = 0;
// About every 1/8 of the answer, in deltas.
const heldEvery = Math.max(1, Math.floor(answerBytes / chunkBytes / 8));
let sinceHeld = 0;
let held = baseline.heapUsed;
for (let sent = 0; sent < answerBytes; ) {
  const size = Math.min(chunkBytes, answerBytes - sent);
  const from = sent % source.length;
  const text = source.toString('latin1', from, Math.min(from + size, source.length));
  if (segment + text.length > segmentBytes) {
    toolCalls += 1;
    await run.toolStart({ toolCallId: `t${toolCalls}`, tool: 'search' });
    await run.toolEnd({ toolCallId: `t${toolCalls}` });
    segment = 0;
  }
  await run.delta(text);
  deltas += 1;
  sent += text.length;
  segment += text.length;
  sinceSample += text.length;
  // A model streams tokens over time: the loop turns between them (timers, syncs, the subscriber's reads).
  if (deltas % 256 === 0) await yieldToLoop();
  if (sinceSample >= 64 * 1024) {
    sinceSample = 0;
    sample();
  }
  // What the run holds live (after GC) at a few points: the peak above counts garbage not collected yet too.
  if (++sinceHeld >= heldEvery) {
    sinceHeld = 0;
    collect();
    held = Math.max(held, process.memoryUsage().heapUsed);
  }
}
sample();
// While the text streamed; what `run.done()` adds (the message's line, its checkpoint) comes on top.
const streaming = { ...peak };
await run.done();
const ms = performance.now() - started;
sample();
clearInterval(sampler);
// The subscriber catches up with the end before the retained memory is taken.
while (subscribers > 0 && session.durableSeq > -1 && received === 0) await yieldToLoop();
await new Promise((resolve) => setTimeout(resolve, 50));
collect();
const retained = measure();
await hub.close();
await Promise.all(reading);
collect();
const closed = measure();
console.log(JSON.stringify({ baseline, held, streaming, peak, retained, closed, ms, deltas, toolCalls, received }));
