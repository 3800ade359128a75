import { join } from 'node:path';
import { createUIMessageStreamResponse, type UIMessageChunk } from 'ai';
import { live } from '../lib/live.js';
import { gc, median, nowMs, round } from '../lib/stats.js';
import type { Figure, FigureRow } from '../lib/types.js';
import { type ResumableStreamPeer, startResumableStreamPeer } from './resumable-stream-peer.js';

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

/** Where a resumed answer's model pauses until the resuming reader is connected: a few chunks into the answer. */
const PAUSE_AT = 4;

/** `chunks` as a stream, as fast as it is read; with `until`, it pauses before chunk {@link PAUSE_AT} until then. */
function streamOf(chunks: readonly UIMessageChunk[], until?: Promise<void>): ReadableStream<UIMessageChunk> {
  let next = 0;
  return new ReadableStream<UIMessageChunk>({
    async pull(controller) {
      if (next === PAUSE_AT && until !== undefined) await until;
      const chunk = chunks[next];
      next += 1;
      if (chunk === undefined) controller.close();
      else controller.enqueue(chunk);
    },
  });
}

/** Reads a body to its end; its length in bytes (UTF-8 for a stream of strings). */
async function drain(body: ReadableStream<Uint8Array | string> | null): Promise<number> {
  let bytes = 0;
  for await (const part of body as unknown as AsyncIterable<Uint8Array | string>)
    bytes += typeof part === 'string' ? Buffer.byteLength(part) : part.byteLength;
  return bytes;
}

/** Both readers of a resumed answer got all of it (the bench measures whole answers, never a reader cut short). */
function sameLength(first: number, resumed: number, who: string): void {
  if (first !== resumed) throw new Error(`${who}: the resuming reader got ${resumed} bytes, the POST's ${first}`);
}

function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/** The POSTs the figure times, each returning its wall time in ms; the `*Resumed` ones with a reader resuming. */
interface Contenders {
  integration(): Promise<number>;
  integrationResumed(): Promise<number>;
  plain(): Promise<number>;
  peer?: { post(): Promise<number>; resumed(): Promise<number> };
}

function contenders(
  chunks: readonly UIMessageChunk[],
  handlers: ReturnType<AiSdk['createChatHandlers']>,
  setAnswer: (stream: () => ReadableStream<UIMessageChunk>) => void,
  peer: ResumableStreamPeer | undefined,
): Contenders {
  let turn = 0;
  const timed = async (run: () => Promise<void>): Promise<number> => {
    gc();
    const begin = nowMs();
    await run();
    return nowMs() - begin;
  };
  const post = (chatId: string) => {
    turn += 1;
    const user = { id: `u${turn}`, role: 'user', parts: [{ type: 'text', text: 'hi' }] };
    return handlers.post(
      new Request('http://bench/api/chat', { method: 'POST', body: JSON.stringify({ id: chatId, messages: [user] }) }),
    );
  };
  return {
    integration: () =>
      timed(async () => {
        setAnswer(() => streamOf(chunks));
        await drain((await post(`c${turn + 1}`)).body);
        await handlers.settled();
      }),
    integrationResumed: () =>
      timed(async () => {
        const model = gate();
        setAnswer(() => streamOf(chunks, model.opened));
        const chatId = `c${turn + 1}`;
        const first = drain((await post(chatId)).body);
        // useChat's resume request (a reload, a second tab): the running answer from its start, then live.
        const resumed = await handlers.resume(chatId);
        if (resumed.status !== 200) throw new Error(`integration: the resume answered ${resumed.status}`);
        model.open();
        const [a, b] = await Promise.all([first, drain(resumed.body)]);
        sameLength(a, b, 'integration');
        await handlers.settled();
      }),
    plain: () =>
      timed(async () => {
        await drain(createUIMessageStreamResponse({ stream: streamOf(chunks) }).body);
      }),
    ...(peer === undefined
      ? {}
      : {
          peer: {
            post: () =>
              timed(async () => {
                turn += 1;
                const { response, settled } = peer.post(`c${turn}`, streamOf(chunks));
                await drain(response.body);
                await settled;
              }),
            resumed: () =>
              timed(async () => {
                turn += 1;
                const model = gate();
                const { response, streamId, created, settled } = peer.post(`c${turn}`, streamOf(chunks, model.opened));
                const first = drain(response.body);
                await created;
                const resumed = await peer.resume(streamId);
                model.open();
                const [a, b] = await Promise.all([first, drain(resumed)]);
                sameLength(a, b, 'resumable-stream');
                await settled;
              }),
          },
        }),
  };
}

const perChunk = (samples: readonly number[], chunks: number) => (median(samples) * 1000) / chunks;

/**
 * Cost per chunk through `@turnjournal/ai-sdk` (issue 40): a POST of `createChatHandlers` — the user message durable,
 * every chunk journalled (deltas group-committed), the response read back from the journal as SSE, the final
 * `UIMessage` committed — read to its end, against the AI SDK's plain `createUIMessageStreamResponse` of the same
 * chunks (SSE, no persistence), and against Vercel's `resumable-stream` on a local Redis wired in as the AI SDK's guide
 * does (resumable-stream-peer.ts); then both again with a second reader that resumes the answer a few chunks in (a
 * reload), the case where resumable-stream publishes every chunk through Redis. Rounds alternated after an untimed
 * warm-up of each; medians. Information rows: what durability and resumability cost per chunk, not targets.
 */
export const aiSdkStreamCost: Figure = {
  id: 'ai-sdk-stream-cost',
  title: 'AI SDK integration: cost per UI message chunk, journalled and read back, vs the SDK plain response',
  async run(context): Promise<FigureRow[]> {
    const deltas = context.mode === 'quick' ? 1000 : 10000;
    const rounds = context.mode === 'quick' ? 3 : 5;
    const chunks = answer(deltas);
    const hub = live.openConversationHub({ root: join(context.workDir, 'chats'), retention: false });
    let nextAnswer = () => streamOf(chunks);
    const handlers = aiSdk.createChatHandlers({ hub, respond: () => nextAnswer() });
    const peer = await startResumableStreamPeer();
    const run = contenders(
      chunks,
      handlers,
      (stream) => {
        nextAnswer = stream;
      },
      peer.ok ? peer.value : undefined,
    );
    const samples = { integration: [] as number[], plain: [] as number[], peer: [] as number[] };
    const resumedSamples = { integration: [] as number[], peer: [] as number[] };
    try {
      await run.integration();
      await run.plain();
      await run.integrationResumed();
      await run.peer?.post();
      await run.peer?.resumed();
      for (let r = 0; r < rounds; r += 1) {
        samples.integration.push(await run.integration());
        samples.plain.push(await run.plain());
        resumedSamples.integration.push(await run.integrationResumed());
        if (run.peer !== undefined) {
          samples.peer.push(await run.peer.post());
          resumedSamples.peer.push(await run.peer.resumed());
        }
      }
    } finally {
      await hub.close();
      if (peer.ok) await peer.value.stop();
    }
    const n = chunks.length;
    const integration = perChunk(samples.integration, n);
    const plain = perChunk(samples.plain, n);
    const integrationResumed = perChunk(resumedSamples.integration, n);
    const viaPeer = peer.ok ? perChunk(samples.peer, n) : null;
    const viaPeerResumed = peer.ok ? perChunk(resumedSamples.peer, n) : null;
    context.log(
      `  per chunk: integration ${integration.toFixed(2)} µs, the SDK's plain response ${plain.toFixed(2)} µs, ` +
        (viaPeer === null ? `resumable-stream skipped` : `resumable-stream ${viaPeer.toFixed(2)} µs`) +
        `; with a resuming reader: integration ${integrationResumed.toFixed(2)} µs` +
        (viaPeerResumed === null ? '' : `, resumable-stream ${viaPeerResumed.toFixed(2)} µs`),
    );
    const ours =
      'a POST of createChatHandlers read to its end (user message durable, chunks journalled with the 20 ms group commit, response followed from the journal, final UIMessage committed)';
    const theirs = `a POST of createUIMessageStreamResponse whose consumeSseStream hands the SSE copy to resumable-stream's createNewResumableStream and stores the active stream id (the AI SDK guide's wiring), read to its end and to the stream's end recorded in Redis; resumable-stream keeps the chunks in the producing process's memory and Redis only coordinates (a sentinel key; pub/sub to resuming readers): no chunk and no message is persisted`;
    const how = `medians of ${rounds} alternated rounds after an untimed warm-up of each`;
    const name = (what: string) => `${what}, per chunk of a ${deltas}-delta answer`;
    return [
      {
        id: 'ai-sdk-chunk-cost',
        name: name('AI SDK chunk through @turnjournal/ai-sdk (journalled, read back as SSE)'),
        value: round(integration),
        unit: 'µs',
        floor: round(plain),
        ratioDefinition:
          "value / floor (cost); lower is better; floor: the SDK's createUIMessageStreamResponse, no persistence",
        direction: 'lower',
        target: 'none (reported)',
        ratio: round(integration / plain, 3),
        met: null,
        status: 'info',
        note: `${ours} vs createUIMessageStreamResponse of the same ${n} chunks read to its end; ${how}`,
        details: {
          chunks: n,
          rounds,
          subjectMs: samples.integration.map((ms) => round(ms)),
          floorMs: samples.plain.map((ms) => round(ms)),
        },
      },
      peerRow(peer, {
        id: 'ai-sdk-chunk-cost-vs-resumable-stream',
        name: name('AI SDK chunk through @turnjournal/ai-sdk vs resumable-stream on Redis'),
        value: integration,
        peer: viaPeer,
        note: `${ours} vs ${theirs}; ${how}`,
        details: { chunks: n, rounds, peerMs: samples.peer.map((ms) => round(ms)) },
      }),
      peerRow(peer, {
        id: 'ai-sdk-resume-cost-vs-resumable-stream',
        name: name('AI SDK chunk with a reader resuming mid-answer: @turnjournal/ai-sdk vs resumable-stream'),
        value: integrationResumed,
        peer: viaPeerResumed,
        note: `the same two POSTs, the model pausing ${PAUSE_AT} chunks in until a second reader has resumed the answer (the integration's resume handler, followed from the journal; resumable-stream's resumeExistingStream, every later chunk published through Redis), both readers read to the end; ${how}`,
        details: {
          chunks: n,
          rounds,
          subjectMs: resumedSamples.integration.map((ms) => round(ms)),
          peerMs: resumedSamples.peer.map((ms) => round(ms)),
        },
      }),
    ];
  },
};

/** A row of the integration against `resumable-stream` (`ratio = integration / peer`), or the peer listed as skipped. */
function peerRow(
  peer: Awaited<ReturnType<typeof startResumableStreamPeer>>,
  row: { id: string; name: string; value: number; peer: number | null; note: string; details: Record<string, unknown> },
): FigureRow {
  const base = {
    id: row.id,
    name: row.name,
    value: round(row.value),
    unit: 'µs',
    direction: 'lower' as const,
    target: 'none (reported)',
    met: null,
    status: 'info' as const,
  };
  if (!peer.ok || row.peer === null)
    return { ...base, floor: null, ratio: null, note: `${peer.ok ? 'peer not measured' : peer.reason}; ${row.note}` };
  return {
    ...base,
    floor: round(row.peer),
    floorUnit: `µs, ${peer.version}`,
    ratioDefinition: 'value / peer (cost); lower is better; peer: resumable-stream on a local Redis',
    ratio: round(row.value / row.peer, 3),
    note: row.note,
    details: row.details,
  };
}
