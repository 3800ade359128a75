// Issue 34, finding 7: what opening an event log costs past the 16 MiB checkpoint line (TJ-EVENT-022), and how many
// events a recovery replays after the last checkpoint. Usage: tsx bench/long-conversation.ts [dir] [case name part]
// Writes five logs (transcripts once and twice past 16 MiB, one of 20,000 records under it, and streamed chats of
// 20,000 messages under and past 16 MiB), then opens each in a fresh child process and prints the open time, the child's peak RSS, the records
// folded after the last checkpoint, and the log's size once compacted with no retention window.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { recoverEventLog } from '../packages/reader/dist/index.js';
import { compactEventLog, openEventLog } from '../packages/writer/dist/index.js';

const self = new URL(import.meta.url).pathname;

async function openChild(file: string): Promise<void> {
  const baseline = process.resourceUsage().maxRSS / 1024;
  const started = performance.now();
  const log = await openEventLog({ file, durability: 'none' });
  const ms = performance.now() - started;
  const rss = process.resourceUsage().maxRSS / 1024;
  const messages = log.snapshot().messages.length;
  await log.close();
  const recovery = await recoverEventLog(file, { findActiveRun: false });
  const figures = {
    openMs: Math.round(ms),
    peakRssMiB: Math.round(rss),
    rssBeforeOpenMiB: Math.round(baseline),
    messages,
    replayedAfterCheckpoint: recovery.acceptedSinceCheckpoint,
    bytesFromCheckpoint: recovery.bytesRead,
    compactedMiB: 0,
  };
  await compactEventLog(file, { retentionSeconds: 0, deliveryWindowSeconds: 0 });
  figures.compactedMiB = Number((statSync(file).size / 2 ** 20).toFixed(1));
  console.log(JSON.stringify(figures));
}

/** `count` messages of `chars` characters each, appended one by one (a record each). */
async function transcript(file: string, count: number, chars: number): Promise<void> {
  const log = await openEventLog({ file, durability: 'none' });
  for (let i = 0; i < count; i++)
    await log.appendMessage({ role: i % 2 === 0 ? 'user' : 'assistant', content: `${i} `.padEnd(chars, 'x') });
  await log.close();
}

/** A streamed chat: `turns` runs, each a user message, ten deltas and the assistant's message. */
async function streamedChat(file: string, turns: number, words = 100): Promise<void> {
  const log = await openEventLog({ file, durability: 'none' });
  for (let t = 0; t < turns; t++) {
    const requestId = `r${t}`;
    void log.chatStarted({ requestId });
    void log.appendMessage({ role: 'user', content: `question ${t} `.padEnd(200, 'q') });
    void log.segmentStarted({ requestId, messageId: `${requestId}.a` });
    for (let d = 0; d < 10; d++) void log.delta({ requestId, messageId: `${requestId}.a`, text: 'word '.repeat(10) });
    void log.appendMessage({ role: 'assistant', content: 'word '.repeat(words), id: `${requestId}.a` });
    await log.chatDone({ requestId });
  }
  await log.close();
}

if (process.argv[2] === '--open') await openChild(process.argv[3] as string);
else {
  const dir = process.argv[2] ?? mkdtempSync(join(tmpdir(), 'tj-long-'));
  mkdirSync(dir, { recursive: true });
  const cases: [string, (file: string) => Promise<void>][] = [
    ['transcript of 20,000 messages, 20 MB (past 16 MiB)', (f) => transcript(f, 20_000, 1_000)],
    ['transcript of 40,000 messages, 40 MB (twice past 16 MiB)', (f) => transcript(f, 40_000, 1_000)],
    ['transcript of 20,000 messages, 2 MB', (f) => transcript(f, 20_000, 100)],
    ['streamed chat of 20,000 messages (10,000 runs)', (f) => streamedChat(f, 10_000)],
    ['streamed chat of 20,000 messages (10,000 runs), 24 MB (past 16 MiB)', (f) => streamedChat(f, 10_000, 450)],
  ];
  const only = process.argv[3];
  for (const [name, make] of cases) {
    if (only !== undefined && !name.includes(only)) continue;
    const file = join(dir, `${name.replace(/[^a-z0-9]+/gi, '-')}.jsonl`);
    await make(file);
    const size = statSync(file).size;
    const out = execFileSync(process.execPath, [...process.execArgv, self, '--open', file], { encoding: 'utf8' });
    console.log(`${name}: ${(size / 2 ** 20).toFixed(1)} MiB log; ${out.trim()}`);
  }
}
