// Child process of the durability tests: a real writer in its own process, which the test kills with SIGKILL.
// It imports the built package (dist, rebuilt by the vitest global setup) so it starts fast without a TS loader.
//
// argv[2] is a JSON config:
// - {op:'append', kind:'turn'|'raw', durability, dir, sessionId?, path?, window, chunk, pad, waitGo?}: opens a turn
//   journal (openTurnJournal) or a raw AppendFile and appends records as fast as it can with `window` appends in
//   flight. With waitGo it first prints `waiting` and waits for a `go` line on stdin, so that a test can start the
//   process early and pay its start-up while it does other work.
//   Prints `ready <pid> <tookOverLock>`, then `i <n>` just before append n is called and `a <n>` once its promise
//   has resolved (the acknowledgement). `chunk` > 0 makes every write call short (at most `chunk` bytes), so that a
//   kill lands inside a record and leaves a torn tail. A failed append prints `e <n> <code>` and exits with 3.
// - {op:'hold', path, waitGo?}: (after a `go` line on stdin when waitGo) opens `path` with AppendFile and prints
//   `ok {"tookOverLock":…}` or `err {"code","message","holder"}`, then keeps the file open until stdin says `exit`
//   or closes.
import { writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { AppendFile, nodeFileSystem } from '../../dist/file-system-entry.js';
import { openTurnJournal } from '../../dist/index.js';

const config = JSON.parse(process.argv[2] ?? '{}');
// Lines go out with a blocking write(2), never through process.stdout: a stream write that finds the pipe full is
// queued in this process and lost on SIGKILL, and a lost `i <n>` line would make the test see records it thinks were
// never attempted. A line is shorter than PIPE_BUF, so the kernel writes it whole or not at all.
function out(line) {
  const bytes = Buffer.from(`${line}\n`);
  for (;;) {
    try {
      writeSync(1, bytes);
      return;
    } catch (error) {
      if (error?.code !== 'EAGAIN') throw error;
    }
  }
}

const input = createInterface({ input: process.stdin });
const waiters = [];
input.on('line', (line) => {
  for (const waiter of waiters.splice(0)) waiter(line.trim());
});
// When the test process goes away, do not outlive it.
input.on('close', () => process.exit(0));
const nextLine = () => new Promise((resolve) => waiters.push(resolve));
async function waitFor(word) {
  for (;;) if ((await nextLine()) === word) return;
}

/** The content of record n: `m<n>:` and a padding whose length depends on n (so batches have varied sizes). */
function contentOf(n, pad) {
  return `m${n}:${'x'.repeat(pad > 0 ? (n * 7919) % pad : 0)}`;
}

/** Raw records are event-log records (spec §6): seq n+1, fixed ts, a user message. */
function rawRecord(n, pad) {
  return {
    seq: n + 1,
    ts: '2026-01-01T00:00:00.000Z',
    type: 'message_append',
    payload: { message: { role: 'user', content: contentOf(n, pad) } },
  };
}

function fileSystem() {
  if (!(config.chunk > 0)) return nodeFileSystem;
  return {
    ...nodeFileSystem,
    write: (fd, buffer, offset, length, position) =>
      nodeFileSystem.write(fd, buffer, offset, Math.min(length, config.chunk), position),
  };
}

async function appendForever() {
  if (config.waitGo) {
    out('waiting');
    await waitFor('go');
  }
  const fs = fileSystem();
  let append;
  let opened;
  if (config.kind === 'turn') {
    const journal = await openTurnJournal({
      dir: config.dir,
      sessionId: config.sessionId,
      durability: config.durability,
      fs,
    });
    opened = journal.opened;
    append = (n) => journal.submit({ content: contentOf(n, config.pad) });
  } else {
    const file = await AppendFile.open(config.path, { durability: config.durability, fs });
    opened = file.opened;
    append = (n) => file.appendRecord(rawRecord(n, config.pad));
  }
  out(`ready ${process.pid} ${opened.tookOverLock}`);
  let next = 0;
  const worker = async () => {
    for (;;) {
      const n = next++;
      out(`i ${n}`);
      try {
        await append(n);
      } catch (error) {
        out(`e ${n} ${error?.code ?? error}`);
        process.exit(3);
      }
      out(`a ${n}`);
    }
  };
  for (let i = 0; i < (config.window ?? 1); i++) void worker();
}

async function hold() {
  if (config.waitGo) {
    out('waiting');
    await waitFor('go');
  }
  let file;
  try {
    file = await AppendFile.open(config.path, { durability: 'every' });
    out(`ok ${JSON.stringify({ tookOverLock: file.opened.tookOverLock })}`);
  } catch (error) {
    out(`err ${JSON.stringify({ code: error?.code, message: error?.message, holder: error?.holder })}`);
  }
  await waitFor('exit');
  await file?.close();
  process.exit(0);
}

if (config.op === 'append') await appendForever();
else if (config.op === 'hold') await hold();
else {
  out(`err ${JSON.stringify({ code: 'bad_config', message: JSON.stringify(config) })}`);
  process.exit(2);
}
