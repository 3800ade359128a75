// A "host" that owns a session on the PostgreSQL store: appends `count` messages to its event log, announces each one
// durable on the store's channel once acknowledged, and prints `ack <seq>` for each. Run by the multi-process tests.
// Usage: node owner-host.mjs <connection string> <store> <session id> <count>
import { openPostgresRecordStore } from '@turnjournal/postgres';
import { openEventLog } from '@turnjournal/writer';

const [connectionString, storeName, sessionId, count] = process.argv.slice(2);
const store = openPostgresRecordStore({ connectionString, store: storeName });
const log = await openEventLog({ store, sessionId, durability: 'group' });
for (let n = 0; n < Number(count); n++) {
  const { seq } = await log.appendMessage({ role: 'user', content: `message ${n} ${'x'.repeat(n % 97)}`, id: `m${n}` });
  await store.channel.publish(sessionId, seq);
  process.stdout.write(`ack ${seq}\n`);
}
await log.close();
await store.close();
process.stdout.write('done\n');
