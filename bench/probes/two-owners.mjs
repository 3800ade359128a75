// Issue 34's fault table for one owner across containers, measured with real PID namespaces (root on Linux): writers
// run under `unshare --pid --fork --mount-proc` on one volume with the default lease (10 s), as two containers of one
// node would. Not a figure of `pnpm bench`: `node bench/probes/two-owners.mjs [records]` after `npm run bootstrap`.
// Prints one row per case: records acknowledged, acknowledged records missing from the file, errors seen, time taken.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const WORKER = join(
  dirname(fileURLToPath(import.meta.url)),
  '../../packages/writer/test/durability/namespace-writer.mjs',
);
const records = Number(process.argv[2] ?? 1000);
const started = [];

function worker(file, pidInNamespace, tag) {
  const config = JSON.stringify({ file, tag }).replaceAll("'", `'\\''`);
  const script = `${pidInNamespace === 3 ? '/bin/true; ' : ''}"${process.execPath}" "${WORKER}" '${config}'; true`;
  const child = spawn('unshare', ['--pid', '--fork', '--mount-proc', 'sh', '-c', script], { detached: true });
  started.push(child);
  const answers = [];
  const waiting = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    const answer = JSON.parse(line);
    const next = waiting.shift();
    if (next) next(answer);
    else answers.push(answer);
  });
  return {
    request(command) {
      child.stdin.write(`${JSON.stringify(command)}\n`);
      return answers.length > 0 ? Promise.resolve(answers.shift()) : new Promise((resolve) => waiting.push(resolve));
    },
    signal(signal) {
      process.kill(-child.pid, signal);
    },
  };
}

const contents = (file) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line).payload?.message?.content)
    .filter((content) => content !== undefined);

async function appendAll(writer, from, to, acked, errors) {
  for (let n = from; n <= to; n++) {
    const answer = await writer.request({ op: 'append', n });
    if (answer.acked !== undefined) acked.push(answer.acked);
    else errors.add(answer.error);
  }
}

async function openWhenFree(writer, errors) {
  const t0 = performance.now();
  for (;;) {
    const answer = await writer.request({ op: 'open' });
    if (answer.opened) return performance.now() - t0;
    errors.add(answer.error);
    if (performance.now() - t0 > 120_000) throw new Error('never opened');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function row(name, file, ackedBy, errors, ms) {
  const present = new Set(contents(file));
  const acked = Object.entries(ackedBy).flatMap(([tag, ns]) => ns.map((n) => `${tag}${n}`));
  const lost = acked.filter((content) => !present.has(content)).length;
  console.log(
    `| ${name} | ${acked.length} | ${lost} | ${[...errors].join(', ') || '—'} | ${ms === undefined ? '—' : `${(ms / 1000).toFixed(1)} s`} |`,
  );
}

const root = mkdtempSync(join(tmpdir(), 'tj-two-owners-'));
try {
  console.log('| case | acked | lost | errors seen | time to take over |\n|---|---|---|---|---|');
  {
    // Two containers on one volume: A writes; B, whose pid 2 ran and exited (A's pid looks dead there), keeps trying.
    const file = join(root, 'both.jsonl');
    const a = worker(file, 2, 'a');
    await a.request({ op: 'open' });
    const b = worker(file, 3, 'b');
    const ackedA = [];
    const errors = new Set();
    let bOpened = false;
    const writing = appendAll(a, 1, records, ackedA, errors);
    const trying = (async () => {
      for (let i = 0; i < 20; i++) {
        const answer = await b.request({ op: 'open' });
        if (answer.opened) bOpened = true;
        else errors.add(`B: ${answer.error}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    await Promise.all([writing, trying]);
    if (bOpened) errors.add('B OPENED: two owners');
    row('two containers, one volume, both writing', file, { a: ackedA }, errors);
  }
  {
    // A container restarted on the same node: the new writer is pid 2 again, like the dead one.
    const file = join(root, 'restart.jsonl');
    const a = worker(file, 2, 'a');
    await a.request({ op: 'open' });
    const ackedA = [];
    const errors = new Set();
    await appendAll(a, 1, records, ackedA, errors);
    a.signal('SIGKILL');
    const b = worker(file, 2, 'b');
    const ms = await openWhenFree(b, errors);
    const ackedB = [];
    await appendAll(b, records + 1, records + 10, ackedB, errors);
    row('container restarted on the same node (SIGKILL, new pid 2)', file, { a: ackedA, b: ackedB }, errors, ms);
  }
  {
    // A paused owner (SIGSTOP) of another container: taken over once its lease ran out, fenced when it wakes.
    const file = join(root, 'paused.jsonl');
    const a = worker(file, 2, 'a');
    await a.request({ op: 'open' });
    const ackedA = [];
    const errors = new Set();
    await appendAll(a, 1, records, ackedA, errors);
    a.signal('SIGSTOP');
    const b = worker(file, 3, 'b');
    const ms = await openWhenFree(b, errors);
    const ackedB = [];
    await appendAll(b, records + 1, records + 100, ackedB, errors);
    a.signal('SIGCONT');
    const woke = await a.request({ op: 'append', n: records * 10 });
    errors.add(`A after waking: ${woke.error ?? 'ACKED'}`);
    await appendAll(b, records + 101, records + 110, ackedB, errors);
    row('paused owner (SIGSTOP past its lease, SIGCONT)', file, { a: ackedA, b: ackedB }, errors, ms);
  }
} finally {
  // A group that already ended (ESRCH) is left so.
  for (const child of started) if (child.exitCode === null && child.signalCode === null) killGroup(child);
  rmSync(root, { recursive: true, force: true });
}

function killGroup(child) {
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch (error) {
    if (error.code !== 'ESRCH') throw error;
  }
}
