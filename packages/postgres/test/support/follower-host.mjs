// A "host" that follows a session another process owns on the PostgreSQL store, as a live follower does: it listens
// on the store's channel, and on each announcement (or when told it may have missed some) reads the session's event
// log from where it stopped, delivering the records up to the durable seq and no further. Prints each delivered
// record as `record <seq> <line>`, and each announcement as `heard <seq>` once the record it names was read.
// Exits once it has delivered seq `last`. Usage: node follower-host.mjs <connection string> <store> <session id> <last>
import { openPostgresRecordStore } from '@turnjournal/postgres';

const [connectionString, storeName, sessionId, last] = process.argv.slice(2);
const store = openPostgresRecordStore({ connectionString, store: storeName });
const location = { family: 'event', sessionId };
let cursor = 0;
let delivered = -1;
let reading = Promise.resolve();
let stop = () => undefined;
const decoder = new TextDecoder();

async function catchUp(heard) {
  const durable = heard ?? (await store.channel.durableSeq(sessionId));
  if (durable <= delivered) return;
  const reader = await store.openReader(location).catch((error) => {
    if (error?.code === 'not_found') return undefined;
    throw error;
  });
  if (reader === undefined) throw new Error(`seq ${durable} was announced before the log existed`);
  let seen = false;
  for await (const batch of reader.records({ from: cursor })) {
    for (const item of batch) {
      if (item.kind !== 'record') throw new Error(`finding ${item.finding.code} at ${item.finding.line}`);
      const seq = item.record.value.seq;
      if (seq > durable) break;
      if (seq === durable) seen = true;
      if (seq !== delivered + 1) throw new Error(`seq ${seq} after ${delivered}`);
      process.stdout.write(`record ${seq} ${decoder.decode(item.record.bytes)}\n`);
      delivered = seq;
      cursor = item.record.offset + item.record.bytes.length + 1;
    }
  }
  await reader.close();
  if (!seen && delivered < durable) throw new Error(`seq ${durable} was announced durable but is not readable`);
  if (heard !== undefined) process.stdout.write(`heard ${heard}\n`);
  if (delivered >= Number(last)) {
    stop();
    await store.close();
    process.stdout.write('done\n');
  }
}

stop = store.channel.listen(sessionId, (heard) => {
  reading = reading.then(() => catchUp(heard));
  reading.catch((error) => {
    process.stderr.write(`${error?.stack ?? error}\n`);
    process.exit(1);
  });
});
process.stdout.write('listening\n');
