// The raw 64-file durable floor with parallel syncs (issue 14), run by bench/figures/sessions-64.ts in a child
// process started with UV_THREADPOOL_SIZE=64, so that libuv's pool runs all 64 syncs at once instead of 4: the floor
// a writer for many sessions is judged against must not be capped by Node's default pool.
//
//   node floor-64-files.mjs DIR TAG LINES_FILE SESSIONS PER_SESSION
//
// LINES_FILE holds SESSIONS × PER_SESSION lines, session by session. Opens SESSIONS files, then times SESSIONS
// concurrent loops of FileHandle write + datasync (one record in flight per file); prints the milliseconds.
import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';

const [dir, tag, linesFile, sessionsArg, perArg] = process.argv.slice(2);
const sessions = Number(sessionsArg);
const perSession = Number(perArg);
const all = (await readFile(linesFile)).toString('utf8').split('\n');
const lines = Array.from({ length: sessions }, (_, s) =>
  Array.from({ length: perSession }, (_, i) => Buffer.from(`${all[s * perSession + i]}\n`)),
);
const handles = await Promise.all(
  Array.from({ length: sessions }, (_, s) => open(join(dir, `floor-${tag}-${s}.jsonl`), 'a')),
);
const start = performance.now();
await Promise.all(
  handles.map(async (handle, s) => {
    for (let i = 0; i < perSession; i += 1) {
      await handle.write(lines[s][i]);
      await handle.datasync();
    }
  }),
);
const ms = performance.now() - start;
await Promise.all(handles.map((h) => h.close()));
process.stdout.write(`${JSON.stringify({ ms, threadpool: process.env.UV_THREADPOOL_SIZE })}\n`);
