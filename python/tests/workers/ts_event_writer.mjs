// The TypeScript writer (packages/writer, built) as a child process of the Python lock tests (test_lock_lease.py):
// the same line protocol as event_writer.py, so that a test drives either implementation alike. Argument: JSON
// {file, leaseMs, tag}. Commands on stdin, one JSON object a line; answers on stdout:
//   {"op":"open"}          -> {"opened":true,"pid":...,"tookOver":...} or {"error":code}
//   {"op":"append","n":k}  -> {"acked":k} once durable, or {"refused":k,"error":code}
//   {"op":"close"}         -> {"closed":true}, then the process exits
import { createInterface } from 'node:readline';
import { openEventLog } from '../../../packages/writer/dist/index.js';

const { file, leaseMs, tag } = JSON.parse(process.argv[2]);
let log;
const say = (answer) => process.stdout.write(`${JSON.stringify(answer)}\n`);

for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line);
  try {
    if (command.op === 'open') {
      log = await openEventLog({ file, durability: 'every', lock: { leaseMs } });
      say({ opened: true, pid: process.pid, tookOver: log.opened?.tookOverLock ?? null });
    } else if (command.op === 'append') {
      await log.appendMessage({ role: 'user', content: `${tag}${command.n}` });
      say({ acked: command.n });
    } else if (command.op === 'close') {
      await log.close();
      say({ closed: true });
      process.exit(0);
    }
  } catch (error) {
    // Only the writer's refusals (they carry a code) are answers; anything else is a bug of this worker.
    if (error?.code === undefined) throw error;
    say(command.op === 'append' ? { refused: command.n, error: error.code } : { error: error.code });
  }
}
