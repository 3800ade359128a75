import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const here = dirname(fileURLToPath(import.meta.url));

// The example's own suite (`npm run test:example`): the browser scenarios and the load test. Separate from `npm test`
// because it needs the system Chromium (`.ci/run` installs it) and the built packages (the server runs `dist`).
export default defineConfig({
  root: join(here, '..', '..'),
  test: {
    name: 'resumable-chat',
    include: ['examples/resumable-chat/test/**/*.test.ts'],
    // One file at a time: each starts servers and a browser; the 2-core CI machine runs them in sequence.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
