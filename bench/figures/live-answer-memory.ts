import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { round } from '../lib/stats.js';
import type { Figure, FigureRow } from '../lib/types.js';

interface Memory {
  readonly rss: number;
  readonly heapUsed: number;
}

/** What bench/child/live-answer-memory.mjs prints. */
interface AnswerMemory {
  readonly baseline: Memory;
  readonly held: number;
  readonly streaming: Memory;
  readonly peak: Memory;
  readonly retained: Memory;
  readonly closed: Memory;
  readonly ms: number;
  readonly deltas: number;
  readonly toolCalls: number;
  readonly received: number;
}

/** One configuration in a process of its own (`node --expose-gc`): nothing of another one is counted. */
function runChild(
  root: string,
  dir: string,
  mode: string,
  answerBytes: number,
  chunkBytes: number,
  segmentBytes: number,
  subscribers: number,
): Promise<AnswerMemory> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        '--expose-gc',
        join(root, 'bench', 'child', 'live-answer-memory.mjs'),
        dir,
        mode,
        String(answerBytes),
        String(chunkBytes),
        String(segmentBytes),
        String(subscribers),
      ],
      { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.once('error', reject);
    child.once('close', (code) => {
      if (code !== 0) reject(new Error(`the answer-memory child exited with ${code}: ${stderr.slice(-800)}`));
      else resolve(JSON.parse(stdout.trim().split('\n').at(-1) as string) as AnswerMemory);
    });
  });
}

/**
 * Server memory a streamed answer costs per byte of it (issue 38: "memory per streamed answer proportional to its
 * size (say the factor)"). A hub streams one answer as `run.delta` calls of ~5 bytes (tokens) or 4 KiB (chunks), in
 * each token mode, with one subscriber taking records and tokens live and with none; the answer comes in segments of
 * at most 8 MB with a tool call between two (a segment's message must fit in one line of the log, 16 MiB). Rows give
 * the peak JS-heap growth over the baseline while it streams and ends, ÷ the answer's bytes; the note adds the peak RSS
 * growth, the live heap at eight points of the stream (after GC) and what stays after `run.done()` and GC (the
 * transcript's message, needed by every snapshot).
 */
export const liveAnswerMemory: Figure = {
  id: 'live-answer-memory',
  title: 'server memory per byte of a streamed answer, by token mode, token size and subscriber',
  async run(context): Promise<FigureRow[]> {
    const quick = context.mode === 'quick';
    const answerBytes = (quick ? 20 : 100) * 1000 * 1000;
    const segmentBytes = 8 * 1000 * 1000;
    const scale = quick ? ' (quick mode: 20 MB answer; full run: 100 MB)' : '';
    const rows: FigureRow[] = [];
    let n = 0;
    for (const mode of ['durable', 'segments'] as const)
      for (const chunkBytes of [5, 4096])
        for (const subscribers of [0, 1]) {
          n += 1;
          const result = await runChild(
            context.root,
            join(context.workDir, `store-${n}`),
            mode,
            answerBytes,
            chunkBytes,
            segmentBytes,
            subscribers,
          );
          const per = (bytes: number): number => round(bytes / answerBytes, 2);
          const heap = per(result.peak.heapUsed - result.baseline.heapUsed);
          const rss = per(result.peak.rss - result.baseline.rss);
          const held = per(result.held - result.baseline.heapUsed);
          const retained = per(result.retained.heapUsed - result.baseline.heapUsed);
          const retainedRss = per(result.retained.rss - result.baseline.rss);
          context.log(`  ${mode} ${chunkBytes} B ${subscribers} sub: ${JSON.stringify({ heap, rss, held, retained })}`);
          const tokens = chunkBytes === 5 ? '~5-byte tokens' : '4 KiB chunks';
          rows.push({
            id: `live-answer-memory-${mode}-${chunkBytes === 5 ? 'tokens' : 'chunks'}-${subscribers === 0 ? 'alone' : 'subscribed'}`,
            name: `peak server heap growth ÷ answer bytes, ${answerBytes / 1e6} MB answer in ${tokens}, \`${mode}\` mode, ${subscribers === 0 ? 'no subscriber' : 'one live subscriber'}${scale}`,
            value: heap,
            unit: '×',
            floor: null,
            ratio: null,
            direction: 'lower',
            target: 'none',
            met: null,
            status: 'info',
            note: `peak RSS growth ${rss} ×; live heap while streaming (after GC) ${held} ×; retained after done + GC ${retained} × heap, ${retainedRss} × RSS; segments of ${segmentBytes / 1e6} MB; ${round(result.ms / 1000, 1)} s`,
            details: { answerBytes, chunkBytes, segmentBytes, subscribers, ...result },
          });
        }
    return rows;
  },
};
