import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const here = dirname(fileURLToPath(import.meta.url));

// The example's own suite (`npm run test:example:ai`): the server in a child process, driven by the AI SDK's own chat
// engine in Node and in the page in Chromium. Separate from `npm test` because the server runs the built packages
// (`dist`) and the page needs the system Chromium (`.ci/run` installs it; CHROMIUM_PATH, default /usr/bin/chromium).
export default defineConfig({
  root: join(here, '..', '..'),
  test: {
    name: 'ai-sdk-chat',
    include: ['examples/ai-sdk-chat/test/**/*.test.ts'],
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
