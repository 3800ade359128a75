import { join } from 'node:path';
import { createUIMessageStreamResponse, type UIMessageChunk } from 'ai';
import { live } from '../lib/live.js';
import { gc, median, nowMs, round } from '../lib/stats.js';
import type { Figure, FigureRow } from '../lib/types.js';
import { startResumableStreamPeer } from './resumable-stream-peer.js';

type AiSdk = typeof import('../../packages/ai-sdk/dist/index.js');

/** The AI SDK integration under test: the repository's built `packages/ai-sdk/dist` (built by the harness). */
const aiSdk: AiSdk = await import(new URL('../../packages/ai-sdk/dist/index.js', import.meta.url).href);

/** The chunks of an answer of `deltas` text deltas, as `streamText(...).toUIMessageStream()` gives them. */
function answer(deltas: number): UIMessageChunk[] {
  return [
    { type: 'start', messageId: 'a' },
    { type: 'start-step' },
    { type: 'text-start', id: 't' },
    ...Array.from(
      { length: deltas },
      (_, i): UIMessageChunk => ({ type: 'text-delta', id: 't', delta: `tok${i % 10} ` }),
    ),
    { type: 'text-end', id: 't' },
    { type: 'finish-step' },
    { type: 'finish', finishReason: 'stop' },
  ];
}

function streamOf(chunks: readonly UIMessageChunk[]): ReadableStream<UIMessageChunk> {
  let next = 0;
  return new ReadableStream<UIMessageChunk>({
    pull(controller) {
      const chunk = chunks[next];
      next += 1;
      if (chunk === undefined) controller.close();
      else controller.enqueue(chunk);
    },
  });
}

/** Reads a response body to its end; its length in bytes. */
async function drain(response: Response): Promise<number> {
  let bytes = 0;
  for await (const part of response.body as unknown as AsyncIterable<Uint8Array>) bytes += part.byteLength;
  return bytes;
}

/**
 * Cost per chunk through `@turnjournal/ai-sdk` (issue 40): a POST of `createChatHandlers` — the user message durable,
 * every chunk journalled (deltas group-committed), the response read back from the journal as SSE, the final
 * `UIMessage` committed — read to its end, against the AI SDK's plain `createUIMessageStreamResponse` of the same
 * chunks (SSE, no persistence) read to its end, and against Vercel's `resumable-stream` on a local Redis wired in as
 * the AI SDK's guide does (see resumable-stream-peer.ts), read to its end and to the stream's end recorded in Redis.
 * Rounds alternated after an untimed warm-up of each; medians. Information rows: what durability and resumability
 * cost per chunk, not targets.
 */
export const aiSdkStreamCost: Figure = {
  id: 'ai-sdk-stream-cost',
  title: 'AI SDK integration: cost per UI message chunk, journalled and read back, vs the SDK plain response',
  async run(context): Promise<FigureRow[]> {
    const deltas = context.mode === 'quick' ? 1000 : 10000;
    const rounds = context.mode === 'quick' ? 3 : 5;
    const chunks = answer(deltas);
    const hub = live.openConversationHub({ root: join(context.workDir, 'chats'), retention: false });
    const handlers = aiSdk.createChatHandlers({ hub, respond: () => streamOf(chunks) });
    let turn = 0;
    const integrated = async (): Promise<number> => {
      turn += 1;
      const user = { id: `u${turn}`, role: 'user', parts: [{ type: 'text', text: 'hi' }] };
      gc();
      const begin = nowMs();
      const response = await handlers.post(
        new Request('http://bench/api/chat', {
          method: 'POST',
          body: JSON.stringify({ id: `c${turn}`, messages: [user] }),
        }),
      );
      await drain(response);
      await handlers.settled();
      return nowMs() - begin;
    };
    const plain = async (): Promise<number> => {
      gc();
      const begin = nowMs();
      await drain(createUIMessageStreamResponse({ stream: streamOf(chunks) }));
      return nowMs() - begin;
    };
    const peer = await startResumableStreamPeer();
    const resumable = async (): Promise<number> => {
      if (!peer.ok) return Number.NaN;
      turn += 1;
      gc();
      const begin = nowMs();
      const { response, settled } = peer.value.post(`c${turn}`, streamOf(chunks));
      await drain(response);
      await settled;
      return nowMs() - begin;
    };
    const subject: number[] = [];
    const floor: number[] = [];
    const peerMs: number[] = [];
    try {
      await integrated();
      await plain();
      await resumable();
      for (let r = 0; r < rounds; r += 1) {
        subject.push(await integrated());
        floor.push(await plain());
        if (peer.ok) peerMs.push(await resumable());
      }
    } finally {
      await hub.close();
      if (peer.ok) await peer.value.stop();
    }
    const perChunk = (median(subject) * 1000) / chunks.length;
    const perPlain = (median(floor) * 1000) / chunks.length;
    const perPeer = peer.ok ? (median(peerMs) * 1000) / chunks.length : null;
    context.log(
      `  per chunk: integration ${perChunk.toFixed(2)} µs vs the SDK's plain response ${perPlain.toFixed(2)} µs` +
        (perPeer === null
          ? ` (resumable-stream: ${peer.ok ? '' : peer.reason})`
          : ` vs resumable-stream ${perPeer.toFixed(2)} µs`),
    );
    const versus = `a POST of createChatHandlers read to its end (user message durable, chunks journalled with the 20 ms group commit, response followed from the journal, final UIMessage committed)`;
    return [
      {
        id: 'ai-sdk-chunk-cost',
        name: `AI SDK chunk through @turnjournal/ai-sdk (journalled, read back as SSE), per chunk of a ${deltas}-delta answer`,
        value: round(perChunk),
        unit: 'µs',
        floor: round(perPlain),
        ratioDefinition:
          "value / floor (cost); lower is better; floor: the SDK's createUIMessageStreamResponse, no persistence",
        direction: 'lower',
        target: 'none (reported)',
        ratio: round(perChunk / perPlain, 3),
        met: null,
        status: 'info',
        note: `${versus} vs createUIMessageStreamResponse of the same ${chunks.length} chunks read to its end; medians of ${rounds} alternated rounds after an untimed warm-up of each`,
        details: {
          chunks: chunks.length,
          rounds,
          subjectMs: subject.map((ms) => round(ms)),
          floorMs: floor.map((ms) => round(ms)),
        },
      },
      resumableStreamRow({ deltas, rounds, chunks: chunks.length, perChunk, perPeer, peer, versus, peerMs }),
    ];
  },
};

/** The integration against `resumable-stream` on Redis (`ratio = integration / peer`), or the peer listed as skipped. */
function resumableStreamRow(measured: {
  deltas: number;
  rounds: number;
  chunks: number;
  perChunk: number;
  perPeer: number | null;
  peer: Awaited<ReturnType<typeof startResumableStreamPeer>>;
  versus: string;
  peerMs: readonly number[];
}): FigureRow {
  const { peer, perPeer, perChunk } = measured;
  const base = {
    id: 'ai-sdk-chunk-cost-vs-resumable-stream',
    name: `AI SDK chunk through @turnjournal/ai-sdk vs resumable-stream on Redis, per chunk of a ${measured.deltas}-delta answer`,
    value: round(perChunk),
    unit: 'µs',
    direction: 'lower' as const,
    target: 'none (reported)',
    met: null,
    status: 'info' as const,
  };
  const what = `${measured.versus} vs a POST of createUIMessageStreamResponse whose consumeSseStream hands the SSE copy to resumable-stream's createNewResumableStream and stores the active stream id (the AI SDK guide's wiring), read to its end and to the stream's end recorded in Redis; resumable-stream keeps the chunks in the producing process's memory and Redis only coordinates (a sentinel key, pub/sub to resuming readers): no chunk and no message is persisted; medians of ${measured.rounds} alternated rounds after an untimed warm-up of each`;
  if (!peer.ok || perPeer === null)
    return { ...base, floor: null, ratio: null, note: `${peer.ok ? 'peer not measured' : peer.reason}; ${what}` };
  return {
    ...base,
    floor: round(perPeer),
    floorUnit: `µs, ${peer.version}`,
    ratioDefinition: 'value / peer (cost); lower is better; peer: resumable-stream on a local Redis',
    ratio: round(perChunk / perPeer, 3),
    note: what,
    details: { chunks: measured.chunks, rounds: measured.rounds, peerMs: measured.peerMs.map((ms) => round(ms)) },
  };
}
