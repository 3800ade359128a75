#!/usr/bin/env node
// Starts the resumable chat: `node server.mjs [--root DIR | --store postgres://…?store=NAME] [--port N] [--host H]
// [--token-ms N] [--model FILE] [--tokens durable|segments]`.
// Then open the printed address. Close the tab mid-answer, go offline, kill the server: the answer comes back.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { startChatServer } from './lib/app.mjs';
import { createFakeModel } from './lib/fake-model.mjs';
import { openChatStore } from './lib/store.mjs';

const { values } = parseArgs({
  options: {
    root: { type: 'string', default: process.env.CHAT_ROOT ?? '.chat-store' },
    // A PostgreSQL store instead of the directory: app servers on several hosts share it (packages/postgres).
    store: { type: 'string', default: process.env.CHAT_STORE ?? '' },
    host: { type: 'string', default: process.env.CHAT_HOST ?? '127.0.0.1' },
    port: { type: 'string', default: process.env.CHAT_PORT ?? '8787' },
    'token-ms': { type: 'string', default: process.env.CHAT_TOKEN_MS ?? '40' },
    // A module exporting createModel(options) -> { name, stream(prompt, { signal }) }: see lib/fake-model.mjs.
    model: { type: 'string', default: process.env.CHAT_MODEL ?? '' },
    'test-hooks': { type: 'boolean', default: false },
    'delta-flush-ms': { type: 'string' },
    // What tokens cost on disk: durable (a record each) or segments (the text at paragraph ends; packages/live README).
    tokens: { type: 'string', default: process.env.CHAT_TOKENS ?? 'durable' },
  },
});

const tokenMs = Number(values['token-ms']);
let model;
if (values.model === '') model = createFakeModel({ tokenMs, holds: values['test-hooks'] });
else {
  const module = await import(pathToFileURL(resolve(values.model)).href);
  model = await module.createModel({ tokenMs });
}

const journals = await openChatStore(values.store === '' ? values.root : values.store).catch((error) => {
  // A wrong URL, a server down, a role without rights: one line saying which, not a stack.
  process.stderr.write(`${error?.message ?? error}\n`);
  process.exit(1);
});
const server = await startChatServer({
  ...(journals.store === undefined ? { root: journals.root } : { store: journals.store }),
  host: values.host,
  port: Number(values.port),
  model,
  testHooks: values['test-hooks'],
  hub: {
    tokens: values.tokens,
    ...(values['delta-flush-ms'] === undefined ? {} : { deltaFlushMs: Number(values['delta-flush-ms']) }),
  },
});
process.stdout.write(
  `${JSON.stringify({ event: 'listening', url: server.url, port: server.port, store: journals.shown, model: model.name })}\n`,
);
if (!values['test-hooks'])
  process.stderr.write(`resumable chat on ${server.url} (store: ${journals.shown}, model: ${model.name})\n`);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (stopping) process.exit(1);
    stopping = true;
    server
      .close()
      .then(() => journals.close())
      .then(
        () => process.exit(0),
        (error) => {
          process.stderr.write(`${error?.stack ?? error}\n`);
          process.exit(1);
        },
      );
  });
}
