#!/usr/bin/env node
// A durable, resumable AI SDK chat in one node:http server: the routes `useChat` calls, on @turnjournal/ai-sdk.
//   POST /api/chat               useChat's DefaultChatTransport: the answer as the SDK's SSE stream, from the journal
//   GET  /api/chat/:id/stream    useChat({ resume: true }): the running (or crash-interrupted) answer, or 204
//   GET  /api/chat/:id/messages  the chat's UIMessage[] for the first render (loadChat)
//   GET  /                       the chat page (public/), on the SDK's own modules served with an import map
// Usage: node server.mjs [--root DIR] [--port N] [--host H] [--word-ms N]   (CHAT_ROOT, PORT, HOST in the environment)
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createChatHandlers } from '@turnjournal/ai-sdk';
import { openConversationHub } from '@turnjournal/live';
import { convertToModelMessages, streamText } from 'ai';
import { browserModules } from './browser-modules.mjs';
import { chooseModel } from './model.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));

const { values: flags } = parseArgs({
  options: {
    root: { type: 'string', default: process.env.CHAT_ROOT ?? '.chat-store' },
    port: { type: 'string', default: process.env.PORT ?? '8788' },
    host: { type: 'string', default: process.env.HOST ?? '127.0.0.1' },
    'word-ms': { type: 'string', default: '60' },
  },
});

const model = chooseModel({ wordDelayMs: Number(flags['word-ms']) });
const hub = openConversationHub({ root: flags.root });
const chat = createChatHandlers({
  hub,
  respond: async ({ messages }) =>
    streamText({ model, messages: await convertToModelMessages(messages) }).toUIMessageStream(),
});

const modules = await browserModules();
const JS = 'text/javascript; charset=utf-8';
/** The page's files: path → [file, content type]. chat-client.mjs is the command-line client's too. */
const PAGE_FILES = {
  '/': [join(HERE, 'public', 'index.html'), 'text/html; charset=utf-8'],
  '/app.mjs': [join(HERE, 'public', 'app.mjs'), JS],
  '/style.css': [join(HERE, 'public', 'style.css'), 'text/css; charset=utf-8'],
  '/vercel-oidc.mjs': [join(HERE, 'public', 'vercel-oidc.mjs'), JS],
  '/chat-client.mjs': [join(HERE, 'chat-client.mjs'), JS],
};

async function pageFile(pathname) {
  if (pathname.startsWith('/vendor/')) {
    const bytes = await modules.serve(pathname);
    return bytes === undefined ? undefined : new Response(bytes, { headers: { 'content-type': JS } });
  }
  const entry = PAGE_FILES[pathname];
  if (entry === undefined) return undefined;
  let body = await readFile(entry[0], 'utf8');
  if (pathname === '/')
    body = body.replace(
      /<script type="importmap">[^<]*<\/script>/,
      () => `<script type="importmap">${modules.importMap}</script>`,
    );
  return new Response(body, { headers: { 'content-type': entry[1], 'cache-control': 'no-store' } });
}

/** The Fetch `Request` of a node:http request (the body read whole: a chat request is small). */
async function toRequest(request, url) {
  if (request.method !== 'POST') return new Request(url, { method: request.method, headers: request.headers });
  const chunks = [];
  for await (const chunk of request) chunks.push(chunk);
  return new Request(url, { method: 'POST', headers: request.headers, body: Buffer.concat(chunks) });
}

async function route(request, url) {
  if (request.method === 'POST' && url.pathname === '/api/chat') return chat.post(await toRequest(request, url));
  const match = /^\/api\/chat\/([^/]+)\/(stream|messages)$/.exec(url.pathname);
  if (request.method === 'GET' && match !== null) {
    const id = decodeURIComponent(match[1]);
    return match[2] === 'stream' ? chat.resume(id) : Response.json(await chat.loadChat(id));
  }
  if (request.method === 'GET') {
    const file = await pageFile(url.pathname);
    if (file !== undefined) return file;
  }
  return new Response('not found\n', { status: 404 });
}

const server = createServer(async (request, response) => {
  try {
    const answer = await route(request, new URL(request.url ?? '/', `http://${request.headers.host ?? 'localhost'}`));
    response.writeHead(answer.status, Object.fromEntries(answer.headers));
    // pipeline destroys the body when the client goes away: that ends this response's reader of the journal, never
    // the generation, which goes on to its end.
    if (answer.body === null) response.end();
    else await pipeline(Readable.fromWeb(answer.body), response);
  } catch (error) {
    if (error?.code === 'ERR_STREAM_PREMATURE_CLOSE') return; // the client left mid-answer
    console.error(error);
    if (!response.headersSent) response.writeHead(500, { 'content-type': 'text/plain' });
    response.end('internal error\n');
  }
});

server.listen(Number(flags.port), flags.host, () => {
  const { port } = server.address();
  console.log(`ai-sdk chat on http://${flags.host}:${port}/ (store: ${flags.root})`);
});

for (const signal of ['SIGINT', 'SIGTERM'])
  process.once(signal, async () => {
    server.close();
    await chat.settled(); // answers being generated are finished and persisted first
    await hub.close();
    process.exit(0);
  });
