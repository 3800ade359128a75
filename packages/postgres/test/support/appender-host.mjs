// A "host" that appends messages to the event logs of some sessions on the PostgreSQL store, as an app server does,
// and says what became of each: `ack <session> <id> <seq>` once acknowledged, `refused <session> <id> <code>` when
// refused (a session stops appending at its first refusal). Each session keeps `window` appends in flight, so the
// `group` commits carry several. Prints `stopped` once every session stopped (a refusal, or `limit` messages each),
// then `closed` or `close <code>`, and exits 0. Used by the crash tests, which compare what it printed with the rows.
// Usage: node appender-host.mjs <connection string> <store> <label> <sessions> <window> <limit>
import { openPostgresRecordStore } from '@turnjournal/postgres';
import { openEventLog } from '@turnjournal/writer';

const [connectionString, storeName, label, sessionList, window, limit] = process.argv.slice(2);
const store = openPostgresRecordStore({ connectionString, store: storeName });
const sessions = sessionList.split(',');
const logs = await Promise.all(sessions.map((sessionId) => openEventLog({ store, sessionId, durability: 'group' })));
const say = (line) => process.stdout.write(`${line}\n`);
say('opened');

async function appendAll(sessionId, log) {
  let next = 0;
  let refused = false;
  const one = async () => {
    while (!refused && next < Number(limit)) {
      const id = `${label}-${sessionId}-${next++}`;
      try {
        const { seq } = await log.appendMessage({ role: 'user', content: `${id} ${'x'.repeat(next % 61)}`, id });
        say(`ack ${sessionId} ${id} ${seq}`);
      } catch (error) {
        refused = true;
        say(`refused ${sessionId} ${id} ${error?.code ?? String(error)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: Number(window) }, one));
}

await Promise.all(sessions.map((sessionId, i) => appendAll(sessionId, logs[i])));
say('stopped');
const closing = await Promise.allSettled([...logs.map((log) => log.close()), store.close()]);
const failed = closing.find((outcome) => outcome.status === 'rejected');
say(failed === undefined ? 'closed' : `close ${failed.reason?.code ?? failed.reason}`);
process.exit(0);
