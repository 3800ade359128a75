// Child process of at-rest.test.ts: real writers of three families in their own process, which the test kills with
// SIGKILL while they hold their files. It imports the built package (dist, rebuilt by the vitest global setup).
//
// argv[2] is the store root. It writes, each append durable (`every` mode, so each file gets pre-allocated space):
// - a run file `run-1` (header, run.start, a status; never ended);
// - a turn journal of session `sess-t`, shard `1`, with one completed turn (nothing for recovery's plan to do);
// - the event log of session `sess-e` with two user messages (no run: nothing for recovery to cancel);
// then prints `ready <pid>` and keeps every file open until the test kills it.
import { writeSync } from 'node:fs';
import { join } from 'node:path';
import { openEventLog, openRunWriter, openTurnJournal } from '../../dist/index.js';

const root = process.argv[2];
const run = await openRunWriter({ root, runId: 'run-1', header: { startedAt: '2026-02-04T00:00:00.000Z' } });
await run.runStart('list files');
await run.status('running');
const journal = await openTurnJournal({ dir: join(root, '_turn_journal'), sessionId: 'sess-t', shard: '1' });
const turn = await journal.submit({ content: 'hello', turnId: 't-1' });
await journal.complete(turn.turnId);
const log = await openEventLog({ root, sessionId: 'sess-e' });
await log.appendMessage({ role: 'user', content: 'one' });
await log.appendMessage({ role: 'user', content: 'two' });
// A blocking write: the line is out before the test's SIGKILL can land.
writeSync(1, `ready ${process.pid}\n`);
// Keep the writers (and their leases) alive until killed; stdin closing means the test is gone.
process.stdin.on('close', () => process.exit(0));
process.stdin.resume();
