// Child process of the peak-memory figure: one whole-process measurement per run, so the figure is the process's own
// high-water mark (`process.resourceUsage().maxRSS`, kept by the kernel) and nothing else the harness did counts.
// Plain JavaScript on purpose: it runs under plain `node`, without a TypeScript loader adding its own memory.
// Usage: node bench/child/read-rss.mjs <what> <file> [chunkBytes]
//   what: baseline | floor | readJournal | checkStore | checkStoreCount (checkStore with keepTurns: false)
import { closeSync, openSync, readSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const [what, file, chunkArg] = process.argv.slice(2);
const chunkBytes = chunkArg === undefined ? undefined : Number(chunkArg);

// The reader under test: the repository's build, or the one TJ_BENCH_READER names (see bench/lib/reader.ts).
const reader = await import(
  process.env.TJ_BENCH_READER ? pathToFileURL(process.env.TJ_BENCH_READER).href : '../../packages/reader/dist/index.js'
);
const started = performance.now();
let records = 0;
let findings = 0;
let extra = {};

if (what === 'floor') {
  // The raw floor: streaming read in 1 MiB chunks, split on LF, JSON.parse each line, keep nothing.
  const size = chunkBytes ?? 1024 * 1024;
  const fd = openSync(file, 'r');
  const chunk = Buffer.allocUnsafe(size);
  let carry = Buffer.alloc(0);
  for (;;) {
    const n = readSync(fd, chunk, 0, size, null);
    if (n === 0) break;
    let data = carry.length > 0 ? Buffer.concat([carry, chunk.subarray(0, n)]) : chunk.subarray(0, n);
    let from = 0;
    for (let lf = data.indexOf(10, from); lf >= 0; lf = data.indexOf(10, from)) {
      JSON.parse(data.toString('utf8', from, lf));
      records += 1;
      from = lf + 1;
    }
    carry = Buffer.from(data.subarray(from));
    data = undefined;
  }
  closeSync(fd);
} else if (what === 'readJournal') {
  const options = chunkBytes === undefined ? {} : { chunkBytes };
  for await (const batch of reader.readJournal(file, options)) {
    for (const item of batch) {
      if (item.kind === 'record') records += 1;
      else findings += 1;
    }
  }
} else if (what === 'checkStore' || what === 'checkStoreCount') {
  const check = await reader.checkStore([file], what === 'checkStore' ? {} : { keepTurns: false });
  records = check.files.reduce((sum, f) => sum + f.records, 0);
  findings = check.findings.length;
  // A reader from before turnCount (TJ_BENCH_READER) keeps its turns whatever the option says.
  extra = { turns: check.sessions.reduce((sum, s) => sum + (s.turnCount ?? s.turns.length), 0) };
} else if (what !== 'baseline') {
  throw new Error(`unknown measurement ${what}`);
}

const ms = performance.now() - started;
const usage = process.resourceUsage();
process.stdout.write(
  `${JSON.stringify({ what, maxRssBytes: usage.maxRSS * 1024, ms, records, findings, ...extra })}\n`,
);
